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
