/**
 * `fs/*` on the TypeScript executor over raw WebSocket JSON. One scripted sequence of calls on
 * a fresh fixture tree runs against both our executor and the real binary, and the replies
 * must be identical (timestamps aside); a few behaviours are also checked on ours alone.
 */
import { mkdtempSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { startCodexExecServer, type RunningExecServer } from '../support/codexExecServer.js';
import { startTsExecServer } from '../support/tsExecServer.js';
import { b64, RawClient } from './rawClient.js';

let ours: RunningExecServer;
let binary: RunningExecServer;
const roots: string[] = [];
const clients: RawClient[] = [];

beforeAll(async () => {
  [ours, binary] = await Promise.all([startTsExecServer(), startCodexExecServer()]);
});

afterEach(async () => {
  await Promise.all(clients.splice(0).map((client) => client.close()));
  for (const root of roots.splice(0)) rmSync(root, { recursive: true, force: true });
});

afterAll(async () => {
  await Promise.all([ours?.stop(), binary?.stop()]);
});

async function connect(server: RunningExecServer): Promise<RawClient> {
  const client = await RawClient.connect(server.url);
  clients.push(client);
  await client.handshake();
  return client;
}

/** root/{f, d/{a, sub/, lnk -> f, broken -> missing}} */
function fixture(): { root: string; uri: (relative?: string) => string } {
  const root = mkdtempSync(join(tmpdir(), 'execrx-fs-'));
  roots.push(root);
  writeFileSync(join(root, 'f'), 'hello\n');
  mkdirSync(join(root, 'd', 'sub'), { recursive: true });
  writeFileSync(join(root, 'd', 'a'), 'x');
  symlinkSync(join(root, 'f'), join(root, 'd', 'lnk'));
  symlinkSync(join(root, 'missing'), join(root, 'd', 'broken'));
  return { root, uri: (relative = '') => pathToFileURL(join(root, relative)).href };
}

type Call = [method: string, params: (uri: (relative?: string) => string) => unknown];

const SCRIPT: Call[] = [
  ['fs/readFile', (u) => ({ path: u('f'), sandbox: null })],
  ['fs/readFile', (u) => ({ path: u('nope') })],
  ['fs/readFile', (u) => ({ path: u('d') })],
  ['fs/readFile', (u) => ({ path: u('d/lnk') })],
  ['fs/getMetadata', (u) => ({ path: u('d/broken') })],
  ['fs/canonicalize', (u) => ({ path: u('d/lnk') })],
  ['fs/canonicalize', (u) => ({ path: u('nope') })],
  ['fs/writeFile', (u) => ({ path: u('nope/x'), dataBase64: b64('hi') })],
  ['fs/writeFile', (u) => ({ path: u('d'), dataBase64: b64('hi') })],
  ['fs/writeFile', (u) => ({ path: u('w'), dataBase64: '!!!' })],
  ['fs/writeFile', (u) => ({ path: u('w'), dataBase64: b64('written') })],
  ['fs/readFile', (u) => ({ path: u('w') })],
  ['fs/createDirectory', (u) => ({ path: u('d'), recursive: false })],
  ['fs/createDirectory', (u) => ({ path: u('d/x/y'), recursive: null })],
  ['fs/remove', (u) => ({ path: u('d/x'), recursive: false, force: null })],
  ['fs/remove', (u) => ({ path: u('zz'), recursive: null, force: false })],
  ['fs/remove', (u) => ({ path: u('zz') })],
  ['fs/copy', (u) => ({ sourcePath: u('d'), destinationPath: u('d/q'), recursive: true })],
  ['fs/copy', (u) => ({ sourcePath: u('d'), destinationPath: u('e'), recursive: false })],
  ['fs/copy', (u) => ({ sourcePath: u('none'), destinationPath: u('g'), recursive: false })],
  ['fs/copy', (u) => ({ sourcePath: u('f'), destinationPath: u('g'), recursive: false })],
  ['fs/readDirectory', (u) => ({ path: u('f') })],
  ['fs/readDirectory', (u) => ({ path: u('d/sub') })],
  ['fs/readFile', () => ({ path: 'file://server/share/x' })],
  ['fs/readFile', () => ({ path: 'file:///C:/x' })],
  ['fs/readFile', (u) => ({ path: `${u('f')}?x=1` })],
  ['fs/readFile', (u) => ({ path: `${u('f')}#frag` })],
  ['fs/readFile', () => ({ path: 'http://x/y' })],
  ['fs/readFile', () => ({ path: '/etc/hostname' })],
  ['fs/open', (u) => ({ handleId: 'h1', path: u('f') })],
  ['fs/readBlock', () => ({ handleId: 'h1', offset: 1, len: 3 })],
  ['fs/readBlock', () => ({ handleId: 'h1', offset: 0, len: 100 })],
  ['fs/readBlock', () => ({ handleId: 'h1', offset: 0, len: 0 })],
  ['fs/readBlock', () => ({ handleId: 'h2', offset: 0, len: 1 })],
  ['fs/open', (u) => ({ handleId: 'h1', path: u('f') })],
  ['fs/open', (u) => ({ handleId: 'x'.repeat(33), path: u('f') })],
  ['fs/open', (u) => ({ handleId: 'h3', path: u('d') })],
  ['fs/close', () => ({ handleId: 'h1' })],
  ['fs/close', () => ({ handleId: 'h9' })],
  ['fs/open', (u) => ({ handleId: 'w1', path: u('streamed'), mode: 'replace' })],
  ['fs/writeBlock', () => ({ handleId: 'w1', offset: 0, chunk: b64('abc') })],
  ['fs/writeBlock', () => ({ handleId: 'w1', offset: 3, chunk: b64('def') })],
  ['fs/close', () => ({ handleId: 'w1' })],
  ['fs/readFile', (u) => ({ path: u('streamed') })],
  [
    'fs/walk',
    (u) => ({
      path: u(),
      options: { maxDepth: 0, maxDirectories: 10, maxEntries: 100, followDirectorySymlinks: false },
    }),
  ],
  [
    'fs/walk',
    (u) => ({
      path: u(),
      options: { maxDepth: 1, maxDirectories: 0, maxEntries: 100, followDirectorySymlinks: false },
    }),
  ],
  [
    'fs/walk',
    (u) => ({
      path: u(),
      options: {
        maxDepth: 65,
        maxDirectories: 10,
        maxEntries: 100,
        followDirectorySymlinks: false,
      },
    }),
  ],
  [
    'fs/walk',
    (u) => ({
      path: u('f'),
      options: { maxDepth: 2, maxDirectories: 10, maxEntries: 100, followDirectorySymlinks: false },
    }),
  ],
  [
    'fs/walk',
    (u) => ({
      path: u(),
      options: { maxDepth: 3, maxDirectories: 10, maxEntries: 100, followDirectorySymlinks: false },
    }),
  ],
  [
    'fs/walk',
    (u) => ({
      path: u(),
      options: { maxDepth: 3, maxDirectories: 10, maxEntries: 2, followDirectorySymlinks: false },
    }),
  ],
];

async function runScript(server: RunningExecServer): Promise<unknown[]> {
  const { root, uri } = fixture();
  const client = await connect(server);
  const replies: unknown[] = [];
  for (const [method, params] of SCRIPT) {
    const reply = await client.request(method, params(uri));
    const text = JSON.stringify(reply.error ?? reply.result)
      .split(root)
      .join('<ROOT>');
    replies.push({ method, reply: JSON.parse(text) });
  }
  return replies;
}

describe('filesystem (ours vs codex 0.169.0)', () => {
  it('answers the scripted fs calls exactly like the binary', async () => {
    const mine = await runScript(ours);
    const theirs = await runScript(binary);
    expect(mine).toHaveLength(SCRIPT.length);
    mine.forEach((reply, index) =>
      expect({ index, reply }).toEqual({ index, reply: theirs[index] }),
    );
  });

  it('reports metadata with the binary key set', async () => {
    const run = async (server: RunningExecServer) => {
      const { uri } = fixture();
      const client = await connect(server);
      return Promise.all(
        ['f', 'd', 'd/lnk'].map((path) =>
          client.call<Record<string, unknown>>('fs/getMetadata', { path: uri(path) }),
        ),
      );
    };
    const [mine, theirs] = await Promise.all([run(ours), run(binary)]);
    const strip = (m: Record<string, unknown>) => ({
      ...m,
      createdAtMs: typeof m.createdAtMs,
      modifiedAtMs: typeof m.modifiedAtMs,
    });
    expect(mine.map(strip)).toEqual(theirs.map(strip));
    expect(mine[2]).toMatchObject({ isSymlink: true, isFile: true, size: 6 });
  });
});

describe('filesystem (ours)', () => {
  it('lists a directory, following symlinks and skipping broken ones', async () => {
    const { uri } = fixture();
    const client = await connect(ours);
    const listing = await client.call<{ entries: { fileName: string }[] }>('fs/readDirectory', {
      path: uri('d'),
    });
    expect(listing.entries.map((e) => e.fileName).sort()).toEqual(['a', 'lnk', 'sub']);
    expect(listing.entries.find((e) => e.fileName === 'lnk')).toEqual({
      fileName: 'lnk',
      isDirectory: false,
      isFile: true,
    });
  });

  it('copies a tree recreating symlinks, and removes it recursively', async () => {
    const { root, uri } = fixture();
    const client = await connect(ours);
    await client.call('fs/copy', {
      sourcePath: uri('d'),
      destinationPath: uri('copy'),
      recursive: true,
    });
    expect(readFileSync(join(root, 'copy', 'lnk'), 'utf8')).toBe('hello\n');
    const meta = await client.call<{ isSymlink: boolean }>('fs/getMetadata', {
      path: uri('copy/lnk'),
    });
    expect(meta.isSymlink).toBe(true);
    expect(
      await client.call('fs/remove', { path: uri('copy'), recursive: true, force: true }),
    ).toEqual({});
    const gone = await client.request('fs/getMetadata', { path: uri('copy') });
    expect(gone.error?.code).toBe(-32004);
  });

  it('enforces a sandbox: a profile with no entries grants nothing; a disabled one everything', async () => {
    const { uri } = fixture();
    const client = await connect(ours);
    const sandbox = {
      permissions: {
        type: 'managed',
        file_system: { type: 'restricted', entries: [] },
        network: 'restricted',
      },
      windowsSandboxLevel: 'disabled',
    };
    const reply = await client.request('fs/readFile', { path: uri('f'), sandbox });
    expect(reply.error).toEqual({ code: -32600, message: 'Permission denied (os error 13)' });
    const unrestricted = { ...sandbox, permissions: { type: 'disabled' } };
    expect(
      (
        await client.call<{ dataBase64: string }>('fs/readFile', {
          path: uri('f'),
          sandbox: unrestricted,
        })
      ).dataBase64,
    ).toBe(b64('hello\n'));
  });

  it('keeps file handles per connection', async () => {
    const { uri } = fixture();
    const first = await connect(ours);
    await first.call('fs/open', { handleId: 'shared', path: uri('f') });
    const second = await connect(ours);
    const reply = await second.request('fs/readBlock', { handleId: 'shared', offset: 0, len: 1 });
    expect(reply.error).toEqual({ code: -32004, message: 'unknown file handle `shared`' });
  });
});
