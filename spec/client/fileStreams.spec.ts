/**
 * Paced file streams (src/client/fileStreams.ts, through `client.fs`): `readFileBlocks` asks
 * for a block only when the consumer pulls; `writeFileStream` pulls an AsyncIterable one chunk
 * per written block, and bounds what an Observable source may queue ahead of the executor.
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import { range, map } from 'rxjs';
import { ExecServerClient } from '../../src/client/index.js';
import { ProtocolError } from '../../src/protocol/errors.js';
import { base64 } from './support/fakeExecutor.js';
import { connectFake } from './support/fakeClient.js';

const opened: ExecServerClient[] = [];
afterEach(() => {
  for (const client of opened.splice(0)) client.close();
});

const INFO = {
  shell: { name: 'bash', path: '/bin/bash' },
  capabilities: { fileWriteStreaming: true },
};

function connect() {
  return connectFake(opened, {}, INFO);
}

const tick = () => new Promise((resolve) => setTimeout(resolve, 0));

describe('readFileBlocks', () => {
  it('sends the next readBlock only when the consumer pulls; stopping early closes', async () => {
    const { client, executor } = connect();
    executor.handlers.set('fs/open', (params) => ({
      handleId: (params as { handleId: string }).handleId,
    }));
    executor.handlers.set('fs/readBlock', () => ({ chunk: base64('abc'), eof: false }));
    executor.handlers.set('fs/close', () => ({}));
    const blocks = client.fs.readFileBlocks('/big');
    expect((await blocks.next()).value).toEqual(new TextEncoder().encode('abc'));
    await tick();
    await tick();
    expect(executor.requests.filter((r) => r.method === 'fs/readBlock')).toHaveLength(1);
    await blocks.next();
    await tick();
    expect(
      executor.requests.filter((r) => r.method === 'fs/readBlock').map((r) => r.params),
    ).toEqual([expect.objectContaining({ offset: 0 }), expect.objectContaining({ offset: 3 })]);
    await blocks.return(undefined);
    await tick();
    expect(executor.requests.filter((r) => r.method === 'fs/close')).toHaveLength(1);
  });
});

describe('writeFileStream', () => {
  it('pulls an AsyncIterable one chunk per written block', async () => {
    const { client, executor } = connect();
    executor.handlers.set('fs/open', (params) => ({
      handleId: (params as { handleId: string }).handleId,
    }));
    executor.handlers.set('fs/close', () => ({}));
    let pulled = 0;
    async function* chunks() {
      for (let i = 0; i < 3; i++) {
        pulled++;
        yield new TextEncoder().encode(`c${i}`);
      }
    }
    let done = false;
    client.fs.writeFileStream('/out', chunks()).subscribe({ complete: () => (done = true) });
    for (let i = 0; i < 3; i++) {
      await tick();
      await tick();
      // One chunk asked for, one block in flight, until the executor answers.
      expect(pulled).toBe(i + 1);
      expect(executor.pending('fs/writeBlock')).toHaveLength(1);
      executor.respond(executor.take('fs/writeBlock'), {});
    }
    await tick();
    await tick();
    expect(done).toBe(true);
    expect(
      executor.requests
        .filter((r) => r.method === 'fs/writeBlock')
        .map((r) => (r.params as { offset: number }).offset),
    ).toEqual([0, 2, 4]);
  });

  it('an Observable that runs 64 MiB ahead of the executor fails with the bound', () => {
    const { client, executor } = connect();
    executor.handlers.set('fs/open', (params) => ({
      handleId: (params as { handleId: string }).handleId,
    }));
    executor.handlers.set('fs/close', () => ({}));
    const MiB = new Uint8Array(1024 * 1024);
    let error: unknown;
    client.fs
      .writeFileStream('/out', range(0, 65).pipe(map(() => MiB)))
      .subscribe({ error: (e: unknown) => (error = e) });
    expect(error).toBeInstanceOf(ProtocolError);
    expect((error as Error).message).toMatch(/ran more than 67108864 bytes ahead/);
    expect(executor.pending('fs/writeBlock')).toHaveLength(1);
  });
});
