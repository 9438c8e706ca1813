/**
 * Environments from a Codex setup (readCodexSetup / CodexEnvironments): the Rust client's
 * precedence (Noise variables, then $CODEX_HOME/environments.toml, then CODEX_EXEC_SERVER_URL)
 * with real files in a temporary CODEX_HOME, and real executors behind each kind: a stdio
 * `execrx serve` and `codex exec-server`, a ws:// executor, and the local one in this process.
 */
import { afterEach, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { firstValueFrom, lastValueFrom, toArray } from 'rxjs';
import {
  CodexEnvironments,
  readCodexSetup,
  type CodexEnvironment,
} from '../../src/environment/codexSetup.js';
import { ConnectionAttemptError } from '../../src/environment/errors.js';
import { EnvironmentRegistryConfigError } from '../../src/registry/index.js';
import { startLocalExecutor } from '../../src/server/localExecutor.js';
import { EXECRX_BIN as EXECRX, threeExecutorsToml } from './support/codexSetupToml.js';
import { startTsExecServer } from '../support/tsExecServer.js';
import { assertBuilt } from '../cli/support/runCli.js';

const NOISE = {
  CODEX_EXEC_SERVER_NOISE_REGISTRY_URL: 'http://127.0.0.1:9',
  CODEX_EXEC_SERVER_NOISE_ENVIRONMENT_ID: 'env-1',
  CODEX_EXEC_SERVER_NOISE_AUTH_TOKEN: 'secret',
};

let codexHome: string;
const open: CodexEnvironments[] = [];

beforeEach(async () => {
  codexHome = await mkdtemp(join(tmpdir(), 'execrx-codex-setup-'));
});
afterEach(async () => {
  for (const environments of open.splice(0)) environments.close();
  await rm(codexHome, { recursive: true, force: true });
});

const writeToml = (text: string) => writeFile(join(codexHome, 'environments.toml'), text);

async function echo(environment: CodexEnvironment, text: string): Promise<string> {
  const handle = await firstValueFrom(
    environment.getExecBackend().start({
      argv: ['/bin/sh', '-c', `printf %s "$GREETING"`],
      cwd: tmpdir(),
      env: { GREETING: text },
    }),
  );
  const chunks = await lastValueFrom(handle.stdout$.pipe(toArray()));
  return Buffer.concat(chunks).toString('utf8');
}

describe('readCodexSetup: precedence', () => {
  it('the three Noise variables win over environments.toml and CODEX_EXEC_SERVER_URL', async () => {
    await writeToml('include_local = false');
    const setup = readCodexSetup({
      codexHome,
      env: { ...NOISE, CODEX_EXEC_SERVER_URL: 'ws://127.0.0.1:1' },
    });
    expect(setup.source).toBe('noise-variables');
    expect(setup.environments.map(({ id, transport }) => [id, transport.kind])).toEqual([
      ['remote', 'noise'],
    ]);
    expect(setup.default).toEqual({ id: 'remote' });
    expect(setup.includeLocal).toBe(false);
  });

  it('an incomplete set of Noise variables is an error naming all three', () => {
    expect(() =>
      readCodexSetup({ codexHome, env: { CODEX_EXEC_SERVER_NOISE_AUTH_TOKEN: ' token ' } }),
    ).toThrow(
      new EnvironmentRegistryConfigError(
        'Noise environment requires CODEX_EXEC_SERVER_NOISE_REGISTRY_URL, CODEX_EXEC_SERVER_NOISE_ENVIRONMENT_ID, and CODEX_EXEC_SERVER_NOISE_AUTH_TOKEN',
      ),
    );
    // Blank values count as unset.
    expect(
      readCodexSetup({ codexHome, env: { CODEX_EXEC_SERVER_NOISE_AUTH_TOKEN: '  ' } }).source,
    ).toBe('CODEX_EXEC_SERVER_URL');
  });

  it('an existing environments.toml wins over CODEX_EXEC_SERVER_URL', async () => {
    await writeToml('[[environments]]\nid = "devbox"\nurl = "ws://127.0.0.1:4512"\n');
    const setup = readCodexSetup({
      env: { CODEX_HOME: codexHome, CODEX_EXEC_SERVER_URL: 'ws://127.0.0.1:1' },
    });
    expect(setup).toMatchObject({
      source: 'environments.toml',
      path: join(codexHome, 'environments.toml'),
      default: { id: 'local' },
      includeLocal: true,
      environments: [{ id: 'devbox', transport: { url: 'ws://127.0.0.1:4512' } }],
    });
  });

  it('without a file, CODEX_EXEC_SERVER_URL: unset or blank → local, none → nothing, URL → remote', () => {
    const url = (value: string | undefined) =>
      readCodexSetup({ codexHome, env: { CODEX_EXEC_SERVER_URL: value } });
    for (const value of [undefined, '', '  ']) {
      expect(url(value)).toEqual({
        source: 'CODEX_EXEC_SERVER_URL',
        environments: [],
        default: { id: 'local' },
        includeLocal: true,
      });
    }
    expect(url(' None ')).toMatchObject({
      environments: [],
      default: 'disabled',
      includeLocal: false,
    });
    expect(url(' ws://127.0.0.1:4512 ')).toMatchObject({
      environments: [
        { id: 'remote', transport: { kind: 'websocket', url: 'ws://127.0.0.1:4512' } },
      ],
      default: { id: 'remote' },
      includeLocal: false,
    });
  });

  it('an unreadable environments.toml is an error naming the file', async () => {
    await mkdir(join(codexHome, 'environments.toml'));
    expect(() => readCodexSetup({ codexHome, env: {} })).toThrow(
      `exec-server protocol error: failed to read environment config \`${join(codexHome, 'environments.toml')}\`: EISDIR`,
    );
  });
});

describe('CodexEnvironments', () => {
  beforeAll(() => assertBuilt());

  it('runs commands on stdio (execrx, codex), ws:// and local environments of one environments.toml', async () => {
    const wsServer = await startTsExecServer();
    try {
      await writeToml(`default = "codex-stdio"\n${threeExecutorsToml(codexHome, wsServer.url)}`);
      const environments = CodexEnvironments.open({
        codexHome,
        env: {},
        local: startLocalExecutor(),
      });
      open.push(environments);
      expect(environments.ids).toEqual(['local', 'execrx-stdio', 'codex-stdio', 'ws']);
      expect(environments.defaultId).toBe('codex-stdio');
      expect(environments.defaultEnvironment).toBe(environments.get('codex-stdio'));
      // stdio environments stay lazy until used.
      expect(await firstValueFrom(environments.get('execrx-stdio')!.status())).toEqual({
        status: 'pending',
      });
      for (const id of environments.ids) {
        expect(await echo(environments.get(id)!, `hello from ${id}`)).toBe(`hello from ${id}`);
      }
      expect(await firstValueFrom(environments.get('codex-stdio')!.status())).toEqual({
        status: 'ready',
      });
      const info = await firstValueFrom(environments.get('codex-stdio')!.info());
      expect(info.capabilities).toBeDefined();
      // The filesystem goes through the same session.
      const path = join(codexHome, 'written-by-stdio.txt');
      const fs = environments.get('execrx-stdio')!.getFilesystem();
      await firstValueFrom(fs.writeFile(path, new TextEncoder().encode('bytes')));
      expect(Buffer.from(await firstValueFrom(fs.readFile(path))).toString()).toBe('bytes');
    } finally {
      await wsServer.stop();
    }
  }, 60_000);

  it('a stdio executor that cannot be spawned fails every use with the same remembered error', async () => {
    await writeToml(
      'include_local = false\n[[environments]]\nid = "missing"\nprogram = "/nonexistent/exec-server"\n',
    );
    const environments = CodexEnvironments.open({ codexHome, env: {} });
    open.push(environments);
    const environment = environments.get('missing')!;
    const first = await firstValueFrom(environment.info()).catch((error: unknown) => error);
    expect(first).toBeInstanceOf(ConnectionAttemptError);
    expect((first as Error).message).toContain('failed to spawn exec-server');
    const second = await firstValueFrom(environment.waitUntilReady()).catch((e: unknown) => e);
    expect(second).toBe(first);
    expect(await firstValueFrom(environment.status())).toEqual({
      status: 'disconnected',
      error: (first as Error).message,
    });
    expect(environments.defaultEnvironment).toBeUndefined();
  });

  it('after close, a stdio environment refuses work', async () => {
    await writeToml(`include_local = false
[[environments]]
id = "execrx-stdio"
program = ${JSON.stringify(process.execPath)}
args = [${JSON.stringify(EXECRX)}, "serve", "--listen", "stdio"]
`);
    const environments = CodexEnvironments.open({ codexHome, env: {} });
    const environment = environments.get('execrx-stdio')!;
    expect(await echo(environment, 'up')).toBe('up');
    environments.close();
    await expect(firstValueFrom(environment.info())).rejects.toThrow(
      'environment `execrx-stdio` is closed',
    );
  }, 30_000);

  it('a setup that includes local needs an executor for it', () => {
    expect(() => CodexEnvironments.open({ codexHome, env: {} })).toThrow(
      'the local environment needs an executor in this process',
    );
  });
});
