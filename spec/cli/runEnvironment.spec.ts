/**
 * `execrx run --environment ID`: the environments of the user's Codex setup, as codex reads
 * them, with a temporary CODEX_HOME: stdio executors (`execrx serve` and the real
 * `codex exec-server`), a ws:// one, `local`, and CODEX_EXEC_SERVER_URL's `remote`.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { codexSetupEnv, threeExecutorsToml } from '../environment/support/codexSetupToml.js';
import { startTsExecServer } from '../support/tsExecServer.js';
import type { RunningExecServer } from '../support/codexExecServer.js';
import { assertBuilt, killRunningClis, runCli, startCli } from './support/runCli.js';

let codexHome: string;
let wsServer: RunningExecServer;

const setupEnv = (extra: Record<string, string> = {}) => codexSetupEnv(codexHome, extra);

beforeAll(async () => {
  assertBuilt();
  codexHome = await mkdtemp(join(tmpdir(), 'execrx-run-environment-'));
  wsServer = await startTsExecServer();
  await writeFile(
    join(codexHome, 'environments.toml'),
    threeExecutorsToml(codexHome, wsServer.url),
  );
});
afterEach(killRunningClis);
afterAll(async () => {
  await wsServer.stop();
  await rm(codexHome, { recursive: true, force: true });
});

describe('execrx run --environment', () => {
  it.each(['execrx-stdio', 'codex-stdio', 'ws', 'local'])(
    'runs on environment %s of environments.toml and exits with the exit code',
    async (id) => {
      const result = await runCli(
        ['run', '--environment', id, '--', 'sh', '-c', `echo on ${id}; echo err >&2; exit 3`],
        { env: setupEnv(), timeoutMs: 30_000 },
      );
      expect(result).toMatchObject({ code: 3, stdout: `on ${id}\n`, stderr: 'err\n' });
    },
    40_000,
  );

  it('cp and ls take --environment too', async () => {
    const listing = join(codexHome, 'listing');
    await mkdir(listing);
    const copied = await runCli(
      [
        'cp',
        '--environment',
        'codex-stdio',
        join(codexHome, 'environments.toml'),
        `remote:${listing}`,
      ],
      { env: setupEnv() },
    );
    expect(copied).toMatchObject({ code: 0, stderr: '' });
    const listed = await runCli(['ls', '--environment', 'execrx-stdio', `remote:${listing}`], {
      env: setupEnv(),
    });
    expect(listed).toMatchObject({ code: 0, stdout: 'environments.toml\n' });
  });

  it('names the configured environments when the id is not one of them', async () => {
    const result = await runCli(['run', '--environment', 'nope', '--', 'true'], {
      env: setupEnv(),
    });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(
      `environment \`nope\` is not configured by ${join(codexHome, 'environments.toml')}; configured: local, execrx-stdio, codex-stdio, ws`,
    );
  });

  it('without environments.toml, CODEX_EXEC_SERVER_URL is environment `remote`', async () => {
    const result = await runCli(['run', '--environment', 'remote', '--', 'echo', 'remote'], {
      env: setupEnv({
        CODEX_HOME: join(codexHome, 'no-such-dir'),
        CODEX_EXEC_SERVER_URL: wsServer.url,
      }),
    });
    expect(result).toMatchObject({ code: 0, stdout: 'remote\n' });
  });

  it('with the three Noise variables, `remote` is the registry environment (over Noise)', async () => {
    const token = 'run-environment-token';
    const harnessToken = 'run-environment-harness-token';
    const rendezvous = startCli(['rendezvous'], {
      env: {
        EXECRX_RENDEZVOUS_EXECUTOR_TOKEN: token,
        EXECRX_RENDEZVOUS_HARNESS_TOKEN: harnessToken,
      },
      timeoutMs: 45_000,
    });
    const [registry] = await rendezvous.stdoutLines(1);
    const executor = startCli(
      ['serve', '--no-warm-up', '--remote', registry as string, '--environment-id', 'noise-env'],
      { env: { CODEX_API_KEY: token }, timeoutMs: 45_000 },
    );
    await executor.stdoutLines(1);
    const result = await runCli(['run', '--environment', 'remote', '--', 'echo', 'over noise'], {
      env: setupEnv({
        CODEX_EXEC_SERVER_URL: 'ws://127.0.0.1:1',
        CODEX_EXEC_SERVER_NOISE_REGISTRY_URL: registry as string,
        CODEX_EXEC_SERVER_NOISE_ENVIRONMENT_ID: 'noise-env',
        CODEX_EXEC_SERVER_NOISE_AUTH_TOKEN: harnessToken,
      }),
      timeoutMs: 30_000,
    });
    expect(result).toMatchObject({ code: 0, stdout: 'over noise\n', stderr: '' });
  }, 45_000);

  it('excludes --url and --registry', async () => {
    const result = await runCli(['run', '--environment', 'ws', '--url', 'ws://x', 'true']);
    expect(result.stderr).toContain('--url and --environment exclude each other');
  });
});
