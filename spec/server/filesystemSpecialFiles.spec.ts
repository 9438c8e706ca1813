/**
 * File operations on FIFOs and devices never park a libuv thread-pool thread (issue #14,
 * "Named pipes"): there are four, so four writes into FIFOs without a reader used to hang
 * every client's file operations. Against both executors where they agree; the binary's
 * `fs/writeFile` and `fs/copy` into a FIFO without a reader wait for one (it has threads to
 * spare), ours refuse at once with ENXIO (DIVERGENCES.md).
 */
import { execFileSync } from 'node:child_process';
import { Socket } from 'node:net';
import { closeSync, constants, mkdtempSync, openSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { pathToFileUri } from '../../src/protocol/pathUri.js';
import { startCodexExecServer, type RunningExecServer } from '../support/codexExecServer.js';
import { startTsExecServer } from '../support/tsExecServer.js';
import { RawClient } from './rawClient.js';

let dir: string;
let fifoCount = 0;
const clients: RawClient[] = [];

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'execrx-special-'));
  writeFileSync(join(dir, 'regular'), 'hello\n');
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));
afterEach(async () => {
  await Promise.all(clients.splice(0).map((client) => client.terminate()));
});

function fifo(): string {
  fifoCount += 1;
  const path = join(dir, `fifo-${fifoCount}`);
  execFileSync('mkfifo', [path]);
  return path;
}

/** Opens and closes the read end, so a writer stuck in open(2) (the old executor) goes on. */
function releaseWriters(path: string): void {
  try {
    closeSync(openSync(path, constants.O_RDONLY | constants.O_NONBLOCK));
  } catch {
    // already gone
  }
}

async function connect(url: string): Promise<RawClient> {
  const client = await RawClient.connect(url);
  clients.push(client);
  await client.handshake();
  return client;
}

/**
 * A reader of the FIFO at `path`, in place when this returns (opened O_NONBLOCK; epoll reports
 * nothing until a writer has come), and the byte count it has read once that writer is done.
 */
function countingReader(path: string): { counted: Promise<number>; stop(): void } {
  const socket = new Socket({ fd: openSync(path, constants.O_RDONLY | constants.O_NONBLOCK) });
  let count = 0;
  socket.on('data', (chunk: Buffer) => (count += chunk.length));
  const counted = new Promise<number>((resolve) => socket.once('close', () => resolve(count)));
  return { counted, stop: () => socket.destroy() };
}

describe('special files on the TypeScript executor', () => {
  let server: RunningExecServer;
  beforeAll(async () => {
    server = await startTsExecServer();
  });
  afterAll(() => server.stop());

  it('answers 8 writes into FIFOs without a reader at once, and another client is not held up', async () => {
    const writer = await connect(server.url);
    const fifos = Array.from({ length: 8 }, () => fifo());
    const ids = fifos.map((path, index) => {
      const uri = pathToFileUri(path);
      if (index % 4 === 0 || index % 4 === 1)
        return writer.post('fs/writeFile', { path: uri, dataBase64: 'aGk=', sandbox: null });
      if (index % 4 === 2)
        return writer.post('fs/open', { handleId: `h${index}`, path: uri, mode: 'replace' });
      return writer.post('fs/copy', {
        sourcePath: pathToFileUri(join(dir, 'regular')),
        destinationPath: uri,
        recursive: false,
        sandbox: null,
      });
    });
    try {
      const other = await connect(server.url);
      const read = await other.request(
        'fs/readFile',
        { path: pathToFileUri(join(dir, 'regular')), sandbox: null },
        10_000,
      );
      expect(read.result).toEqual({ dataBase64: Buffer.from('hello\n').toString('base64') });
      const replies = await Promise.all(ids.map((id) => writer.response(id, 10_000)));
      for (const reply of replies) {
        expect(reply.error).toEqual({
          code: -32603,
          message: 'No such device or address (os error 6)',
        });
      }
    } finally {
      for (const path of fifos) releaseWriters(path);
    }
  }, 60_000);
});

describe.each([
  ['codex exec-server', () => startCodexExecServer()],
  ['TypeScript executor', () => startTsExecServer()],
] as const)('special files on %s', (_name, start) => {
  let server: RunningExecServer;
  beforeAll(async () => {
    server = await start();
  });
  afterAll(() => server.stop());

  it('writes a file into a FIFO that has a reader', async () => {
    const client = await connect(server.url);
    const path = fifo();
    const reader = countingReader(path);
    const data = Buffer.alloc(200_000, 0x78); // more than a pipe holds
    const reply = await client.request(
      'fs/writeFile',
      { path: pathToFileUri(path), dataBase64: data.toString('base64'), sandbox: null },
      10_000,
    );
    expect(reply.result).toEqual({});
    expect(await reader.counted).toBe(data.length);
  }, 30_000);

  it('copies a regular file into a FIFO that has a reader', async () => {
    const client = await connect(server.url);
    const path = fifo();
    const reader = countingReader(path);
    const reply = await client.request(
      'fs/copy',
      {
        sourcePath: pathToFileUri(join(dir, 'regular')),
        destinationPath: pathToFileUri(path),
        recursive: false,
        sandbox: null,
      },
      10_000,
    );
    expect(reply.result).toEqual({});
    expect(await reader.counted).toBe(6);
  }, 30_000);

  it('refuses to open a FIFO for replacing: ENXIO without a reader, "not a file" with one', async () => {
    const client = await connect(server.url);
    const path = fifo();
    const alone = await client.request('fs/open', {
      handleId: 'a',
      path: pathToFileUri(path),
      mode: 'replace',
    });
    expect(alone.error).toEqual({
      code: -32603,
      message: 'No such device or address (os error 6)',
    });
    const reader = countingReader(path);
    const read = await client.request('fs/open', {
      handleId: 'b',
      path: pathToFileUri(path),
      mode: 'replace',
    });
    reader.stop();
    expect(read.error).toEqual({ code: -32600, message: `path \`${path}\` is not a file` });
  }, 30_000);

  it('reads neither a FIFO nor a character device, and writes /dev/null', async () => {
    const client = await connect(server.url);
    const path = fifo();
    for (const target of [path, '/dev/zero']) {
      const whole = await client.request('fs/readFile', {
        path: pathToFileUri(target),
        sandbox: null,
      });
      expect(whole.error).toEqual({ code: -32600, message: `path \`${target}\` is not a file` });
      const streamed = await client.request('fs/open', {
        handleId: 'r',
        path: pathToFileUri(target),
        mode: 'read',
      });
      expect(streamed.error).toEqual({
        code: -32600,
        message: `path \`${target}\` is not a file`,
      });
    }
    const devNull = await client.request('fs/writeFile', {
      path: 'file:///dev/null',
      dataBase64: 'aGk=',
      sandbox: null,
    });
    expect(devNull.result).toEqual({});
  }, 30_000);
});
