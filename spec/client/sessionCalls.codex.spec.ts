/**
 * The calls of the Rust client beyond processes/files/streams (src/client/sessionCalls.ts,
 * `client.process(id)`, `client.call`, `client.http.fetch`) against the real
 * `codex exec-server` 0.169.0 and, where it serves them, our own executor (src/server).
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { realpathSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { firstValueFrom, timeout, type Observable } from 'rxjs';
import { ExecServerClient } from '../../src/client/index.js';
import { ServerError } from '../../src/protocol/errors.js';
import { pathToFileUri } from '../../src/protocol/pathUri.js';
import { connectWebSocket } from '../../src/transport/webSocketTransport.js';
import type { Transport } from '../../src/transport/transport.js';
import { startCodexExecServer, type RunningExecServer } from '../support/codexExecServer.js';
import { startTsExecServer } from '../support/tsExecServer.js';

const within = <T>(source: Observable<T>): Promise<T> =>
  firstValueFrom(source.pipe(timeout(20_000)));

let workDir: string;
let codexHome: string;
const servers: RunningExecServer[] = [];
const clients: ExecServerClient[] = [];
let codex: RunningExecServer;
let ours: RunningExecServer;

async function open(
  server: RunningExecServer,
  resumeSessionId?: string,
): Promise<{ client: ExecServerClient; transport: Transport }> {
  const transport = await within(connectWebSocket(server.url));
  const client = await within(
    ExecServerClient.connect(transport, {
      clientName: 'execrx-spec',
      ...(resumeSessionId === undefined ? {} : { resumeSessionId }),
    }),
  );
  clients.push(client);
  return { client, transport };
}

beforeAll(async () => {
  workDir = realpathSync(await mkdtemp(join(tmpdir(), 'execrx-calls-')));
  codexHome = join(workDir, 'codex-home');
  await mkdir(codexHome);
  await writeFile(join(codexHome, 'config.toml'), 'model = "spec-model"\n');
  codex = await startCodexExecServer({ codexHome });
  servers.push(codex);
  ours = await startTsExecServer();
  servers.push(ours);
});

afterAll(async () => {
  for (const client of clients) client.close();
  for (const server of servers) await server.stop();
  if (workDir) await rm(workDir, { recursive: true, force: true });
});

describe('environmentConfig/read', () => {
  it('codex: the user layer reduced to the asked key', async () => {
    const { client } = await open(codex);
    const config = await within(
      client.readEnvironmentConfig({
        cwd: workDir,
        configPaths: [['model']],
        requirementsPaths: [],
        timeoutMs: 10_000,
      }),
    );
    expect(config.codexHomeDir).toBe(pathToFileUri(codexHome));
    expect(config.config.layers.map((layer) => layer.toml)).toEqual(['model = "spec-model"\n']);
  });

  it.each([
    ['codex', () => codex],
    ['execrx', () => ours],
  ])('%s: no path at all is refused with -32602', async (_name, server) => {
    const { client } = await open(server());
    const error = await within(
      client.readEnvironmentConfig({ cwd: workDir, configPaths: [], requirementsPaths: [] }),
    ).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ServerError);
    expect((error as ServerError).code).toBe(-32602);
    expect((error as ServerError).serverMessage).toBe(
      'at least one config or requirements path is required',
    );
  });
});

describe('capability discovery', () => {
  it('v1: skills under a root, and a root that is not a directory', async () => {
    const root = join(workDir, 'caps');
    await mkdir(join(root, 'greet'), { recursive: true });
    await writeFile(join(root, 'greet', 'SKILL.md'), '---\nname: greet\n---\nSay hi.\n');
    const { client } = await open(codex);
    const result = await within(
      client.discoverCapabilityRoots([
        { id: 'caps', path: root },
        { id: 'file', path: join(codexHome, 'config.toml') },
      ]),
    );
    expect(result.roots.map((r) => r.id)).toEqual(['caps', 'file']);
    expect(result.roots[0]!.skills).toHaveLength(1);
    expect(result.roots[0]!.error ?? null).toBeNull();
    expect(result.roots[1]!.error).toBe(
      `capability root ${pathToFileUri(join(codexHome, 'config.toml'))} is not a directory`,
    );
  });

  it('v2: plugins, skills and warnings for a cwd', async () => {
    const { client } = await open(codex);
    const result = await within(client.discoverCapabilities(workDir));
    expect(Array.isArray(result.plugins)).toBe(true);
    expect(Array.isArray(result.skills)).toBe(true);
    expect(Array.isArray(result.warnings)).toBe(true);
  });
});

describe('uncached environment info and the escape hatch', () => {
  it('forceEnvironmentInfo asks the executor; call() sends a method as the table types it', async () => {
    const { client } = await open(codex);
    const info = await within(client.forceEnvironmentInfo());
    expect(info.capabilities.environmentConfigRead).toBe(true);
    const meta = await within(
      client.call('fs/getMetadata', { path: pathToFileUri(workDir), sandbox: null }),
    );
    expect(meta.isDirectory).toBe(true);
  });

  it('execrx: fs/watchMissing through call()', async () => {
    const { client } = await open(ours);
    const result = await within(
      client.call('fs/watchMissing', {
        watchId: 1,
        missing: [pathToFileUri(join(workDir, 'not-yet'))],
        present: pathToFileUri(workDir),
      }),
    );
    expect(typeof result.watching).toBe('boolean');
  });
});

describe('buffered HTTP', () => {
  let http: Server;
  let base: string;
  beforeAll(async () => {
    http = createServer((_req, res) => res.end('whole body'));
    await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => http.close(() => resolve())));

  it('fetch returns status, headers and the whole body', async () => {
    const { client } = await open(codex);
    const response = await within(client.http.fetch({ method: 'GET', url: `${base}/x` }));
    expect(response.status).toBe(200);
    expect(Buffer.from(response.body).toString('utf8')).toBe('whole body');
    expect(response.headers.some((h) => h.name === 'content-length')).toBe(true);
  });
});

describe('process calls by id after a resume', () => {
  it('another client object resumes the session and drives the process by id', async () => {
    const first = await open(codex);
    const started = await within(
      first.client.startProcess({
        argv: ['cat'],
        cwd: workDir,
        pipeStdin: true,
        env: { PATH: '/usr/bin:/bin' },
      }),
    );
    const sessionId = first.client.sessionId;
    first.transport.close();
    // The executor needs a moment to detach the old connection (-32010 until then).
    let second: { client: ExecServerClient } | undefined;
    for (let attempt = 0; attempt < 50 && second === undefined; attempt++) {
      second = await open(codex, sessionId).catch(async (error: unknown) => {
        if (!(error instanceof ServerError) || error.code !== -32010) throw error;
        await new Promise((resolve) => setTimeout(resolve, 100));
        return undefined;
      });
    }
    const handle = second!.client.process(started.processId);
    await within(handle.write('by id\n'));
    let seen = '';
    let afterSeq = 0;
    for (let attempt = 0; attempt < 50 && !seen.includes('by id'); attempt++) {
      const read = await within(handle.read({ afterSeq, waitMs: 200 }));
      for (const chunk of read.chunks) seen += Buffer.from(chunk.chunk).toString('utf8');
      afterSeq = read.nextSeq - 1;
    }
    expect(seen).toBe('by id\n');
    expect(await within(handle.terminate())).toBe(true);
  }, 30_000);
});
