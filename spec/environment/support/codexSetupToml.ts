/**
 * An environments.toml naming three real executors: `execrx serve --listen stdio` (the built
 * CLI), `codex exec-server --listen stdio` and a ws:// one.
 */
import { fileURLToPath } from 'node:url';
import { codexCommand } from '../../support/codexExecServer.js';

export const EXECRX_BIN = fileURLToPath(new URL('../../../bin/execrx.js', import.meta.url));

/** The `[[environments]]` entries `execrx-stdio`, `codex-stdio` and `ws` (at `wsUrl`). */
export function threeExecutorsToml(codexHome: string, wsUrl: string): string {
  const codex = codexCommand();
  return `
[[environments]]
id = "execrx-stdio"
program = ${JSON.stringify(process.execPath)}
args = [${JSON.stringify(EXECRX_BIN)}, "serve", "--listen", "stdio"]

[[environments]]
id = "codex-stdio"
program = ${JSON.stringify(codex.command)}
args = ${JSON.stringify([...codex.prefixArgs, 'exec-server', '--listen', 'stdio'])}
env = { CODEX_HOME = ${JSON.stringify(codexHome)} }

[[environments]]
id = "ws"
url = "${wsUrl}"
`;
}

/**
 * Child variables that make `codexHome` the whole Codex setup: CODEX_EXEC_SERVER_URL and the
 * Noise variables emptied (the test runner's own are ignored), then `extra`.
 */
export function codexSetupEnv(
  codexHome: string,
  extra: Readonly<Record<string, string>> = {},
): Record<string, string> {
  return {
    CODEX_HOME: codexHome,
    CODEX_EXEC_SERVER_URL: '',
    CODEX_EXEC_SERVER_NOISE_REGISTRY_URL: '',
    CODEX_EXEC_SERVER_NOISE_ENVIRONMENT_ID: '',
    CODEX_EXEC_SERVER_NOISE_AUTH_TOKEN: '',
    CODEX_EXEC_SERVER_NOISE_CHATGPT_ACCOUNT_ID: '',
    ...extra,
  };
}
