/**
 * FrameSlabs against its plain twin (a fresh buffer per write), on a real loopback socket:
 * the peer receives the same bytes in the same order, also when many writes are in flight at
 * once (slabs are reused only after their write completed) and for writes bigger than a slab.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { createServer, connect, type Server, type Socket } from 'node:net';
import { FrameSlabs } from '../../../src/server/fastpath/frameSlabs.js';
import { FrameSlabs as PlainFrameSlabs } from '../../../bench/plain/server/fastpath/frameSlabs.js';

let server: Server;
let port: number;
const received = new Map<number, Buffer[]>();

beforeAll(async () => {
  server = createServer((socket) => {
    const chunks: Buffer[] = [];
    socket.once('data', (first: Buffer) => {
      received.set(first.readUInt32BE(0), chunks);
      chunks.push(first.subarray(4));
      socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as { port: number }).port;
});

afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

let nextId = 1;

/** Writes `writes` through `slabs` on a fresh connection; resolves with what the peer got. */
async function sendThrough(
  slabs: { write(socket: Socket, length: number, fill: (target: Buffer) => void): void },
  writes: readonly Buffer[],
): Promise<Buffer> {
  const id = nextId++;
  const socket = connect(port, '127.0.0.1');
  await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
  const header = Buffer.alloc(4);
  header.writeUInt32BE(id);
  socket.write(header);
  for (const bytes of writes) slabs.write(socket, bytes.length, (target) => bytes.copy(target));
  await new Promise<void>((resolve) => socket.end(resolve));
  for (let wait = 0; wait < 500; wait += 1) {
    const chunks = received.get(id);
    const total = chunks?.reduce((sum, chunk) => sum + chunk.length, 0) ?? -1;
    if (total === writes.reduce((sum, bytes) => sum + bytes.length, 0)) break;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  socket.destroy();
  return Buffer.concat(received.get(id) ?? []);
}

describe('FrameSlabs (fast path) against its plain twin', () => {
  it('puts the same bytes on the wire in the same order', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.oneof(
            fc.uint8Array({ minLength: 1, maxLength: 2048 }),
            fc.integer({ min: 200_000, max: 300_000 }).map((n) => new Uint8Array(n).fill(n & 255)),
          ),
          { minLength: 1, maxLength: 12 },
        ),
        async (arrays) => {
          const writes = arrays.map((bytes) => Buffer.from(bytes));
          const fast = await sendThrough(new FrameSlabs(), writes);
          const plain = await sendThrough(new PlainFrameSlabs(), writes);
          expect(fast.equals(plain)).toBe(true);
          expect(fast.equals(Buffer.concat(writes))).toBe(true);
        },
      ),
      { numRuns: 25 },
    );
  });

  it('reuses a slab only after its write: a burst of writes in flight arrives intact', async () => {
    const slabs = new FrameSlabs();
    const writes = Array.from({ length: 64 }, (_, i) => Buffer.alloc(200_000, i));
    for (let round = 0; round < 2; round += 1) {
      expect((await sendThrough(slabs, writes)).equals(Buffer.concat(writes))).toBe(true);
    }
  });
});
