/**
 * `execrx console --environment ID`, without a browser: every kind of environment a Codex setup
 * names (a temporary CODEX_HOME with environments.toml): a stdio executor (`execrx serve
 * --listen stdio`, spawned by the console, one child per page connection and gone with it),
 * `local`, a ws:// executor (the pass-through), and the Noise variables (the page's registry
 * target). The pass-through keeps its token and Origin checks.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { codexSetupEnv, threeExecutorsToml } from '../environment/support/codexSetupToml.js';
import { isAlive, waitUntilGone } from '../support/processAlive.js';
import type { RunningExecServer } from '../support/codexExecServer.js';
import { startTsExecServer } from '../support/tsExecServer.js';
import { RawClient, startParams } from '../server/rawClient.js';
import { assertBuilt, killRunningClis, runCli, startCli } from './support/runCli.js';
import { upgradeStatus } from './support/upgradeStatus.js';

const TIMEOUT_MS = 45_000;

let codexHome: string;
let wsServer: RunningExecServer;
const clients: RawClient[] = [];

const setupEnv = (extra: Record<string, string> = {}) => codexSetupEnv(codexHome, extra);

beforeAll(async () => {
  assertBuilt();
  codexHome = await mkdtemp(join(tmpdir(), 'execrx-console-environment-'));
  wsServer = await startTsExecServer();
  await writeFile(
    join(codexHome, 'environments.toml'),
    threeExecutorsToml(codexHome, wsServer.url),
  );
});
afterEach(async () => {
  await Promise.all(clients.splice(0).map((client) => client.terminate()));
  killRunningClis();
});
afterAll(async () => {
  await wsServer.stop();
  await rm(codexHome, { recursive: true, force: true });
});

/** `execrx console --environment id`: its printed URL. */
async function startConsole(id: string, env = setupEnv()): Promise<URL> {
  const cli = startCli(['console', '--environment', id], { env, timeoutMs: TIMEOUT_MS });
  return new URL((await cli.stdoutLines(1))[0] as string);
}

/** A page connection to the pass-through (token and Origin as the page sends them). */
async function connectPage(url: URL): Promise<RawClient> {
  const client = await RawClient.connect(
    `ws://${url.host}/executor?token=${url.searchParams.get('token')}`,
    { origin: url.origin },
  );
  clients.push(client);
  return client;
}

/** Starts `sh -c 'echo $$; …'` as `id` and returns the shell's pid. */
async function startShell(client: RawClient, id: string, script: string): Promise<number> {
  await client.call('process/start', startParams(id, ['sh', '-c', `echo $$; ${script}`]));
  const output = await client.waitFor((m) => m.method === 'process/output');
  return Number(Buffer.from(String(output.params?.chunk), 'base64').toString().trim());
}

describe('execrx console --environment', () => {
  it(
    'stdio: one executor child per page connection, behind the token and Origin checks, gone with its connection',
    async () => {
      const url = await startConsole('execrx-stdio');
      expect(await (await fetch(url)).text()).toContain(
        '"kind":"executor","path":"/executor","label":"environment execrx-stdio (stdio)"',
      );
      const executor = `ws://${url.host}/executor?token=${url.searchParams.get('token')}`;
      expect(await upgradeStatus(executor, 'http://evil.example')).toBe(403);
      expect(await upgradeStatus(executor, undefined)).toBe(403);
      expect(await upgradeStatus(`ws://${url.host}/executor?token=nope`, url.origin)).toBe(403);

      const first = await connectPage(url);
      const second = await connectPage(url);
      await first.handshake();
      await second.handshake();
      const firstShell = await startShell(first, 'sleeper', 'exec sleep 600');
      const secondShell = await startShell(second, 'sleeper', 'exec sleep 600');
      // Two executors: the same process id is free in each, and the shells are distinct.
      expect(firstShell).not.toBe(secondShell);
      expect(isAlive(firstShell)).toBe(true);

      await first.close();
      await waitUntilGone(firstShell);
      expect(isAlive(firstShell)).toBe(false);
      expect(isAlive(secondShell)).toBe(true);
      await second.close();
      await waitUntilGone(secondShell);
      expect(isAlive(secondShell)).toBe(false);
    },
    TIMEOUT_MS,
  );

  it(
    'local: the page reaches an executor inside the console process',
    async () => {
      const url = await startConsole('local');
      const page = await connectPage(url);
      await page.handshake();
      await page.call('process/start', startParams('p', ['echo', 'local']));
      const output = await page.waitFor((m) => m.method === 'process/output');
      expect(Buffer.from(String(output.params?.chunk), 'base64').toString()).toBe('local\n');
    },
    TIMEOUT_MS,
  );

  it(
    'ws: the pass-through to the configured URL',
    async () => {
      const url = await startConsole('ws');
      expect(await (await fetch(url)).text()).toContain(
        `"label":"environment ws (${wsServer.url})"`,
      );
      const page = await connectPage(url);
      expect(typeof (await page.handshake())).toBe('string');
    },
    TIMEOUT_MS,
  );

  it(
    'Noise variables: the page gets the registry target and no pass-through',
    async () => {
      const env = setupEnv({
        CODEX_EXEC_SERVER_NOISE_REGISTRY_URL: 'http://127.0.0.1:9',
        CODEX_EXEC_SERVER_NOISE_ENVIRONMENT_ID: 'noise-env',
        CODEX_EXEC_SERVER_NOISE_AUTH_TOKEN: 'harness-token',
      });
      const url = await startConsole('remote', env);
      expect(await (await fetch(url)).text()).toContain(
        '{"kind":"registry","registryUrl":"http://127.0.0.1:9","environmentId":"noise-env","token":"harness-token"}',
      );
      const executor = `ws://${url.host}/executor?token=${url.searchParams.get('token')}`;
      expect(await upgradeStatus(executor, url.origin)).toBe(403);
    },
    TIMEOUT_MS,
  );

  it('refuses an id the setup does not configure, naming the ones it does', async () => {
    const result = await runCli(['console', '--environment', 'nope'], { env: setupEnv() });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('configured: local, execrx-stdio, codex-stdio, ws');
  });

  it(
    'a stdio program that cannot start is a 502 to the page',
    async () => {
      const home = await mkdtemp(join(tmpdir(), 'execrx-console-missing-'));
      try {
        await writeFile(
          join(home, 'environments.toml'),
          '[[environments]]\nid = "missing"\nprogram = "/nonexistent/execrx-missing"\n',
        );
        const url = await startConsole('missing', setupEnv({ CODEX_HOME: home }));
        const executor = `ws://${url.host}/executor?token=${url.searchParams.get('token')}`;
        expect(await upgradeStatus(executor, url.origin)).toBe(502);
      } finally {
        await rm(home, { recursive: true, force: true });
      }
    },
    TIMEOUT_MS,
  );
});
