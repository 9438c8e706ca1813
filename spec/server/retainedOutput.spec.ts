/**
 * The replay buffer of an attached, caught-up process (managedProcess.ts): beyond
 * RETAINED_OUTPUT_BYTES the oldest output is dropped, and `process/read` returns the newest
 * output as one contiguous run of seqs ending where the live stream ended, also from an
 * `afterSeq` in its middle. The ring that holds those bytes (retainedOutput.ts) gives back
 * exactly what was pushed, across wrap-arounds and growths.
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { RETAINED_OUTPUT_BYTES } from '../../src/server/managedProcess.js';
import { RetainedOutput } from '../../src/server/retainedOutput.js';
import type { RunningExecServer } from '../support/codexExecServer.js';
import { startTsExecServer } from '../support/tsExecServer.js';
import { RawClient, startParams } from './rawClient.js';

let server: RunningExecServer | undefined;
let client: RawClient | undefined;

afterEach(async () => {
  await client?.close();
  await server?.stop();
});

interface ReadResult {
  chunks: { seq: number; chunk: string }[];
  nextSeq: number;
}

describe('retained output', () => {
  it('keeps the newest RETAINED_OUTPUT_BYTES as a contiguous run of seqs', async () => {
    server = await startTsExecServer();
    client = await RawClient.connect(server.url);
    await client.handshake();
    const total = RETAINED_OUTPUT_BYTES + 3 * 1024 * 1024;
    await client.call(
      'process/start',
      startParams('p', ['head', '-c', String(total), '/dev/zero']),
    );
    await client.waitClosedNotification('p', 60_000);
    const outputs = client.notifications('process/output', 'p');
    const lastOutputSeq = outputs[outputs.length - 1]!.params!.seq as number;

    const all = await client.call<ReadResult>('process/read', {
      processId: 'p',
      afterSeq: 0,
      maxBytes: null,
      waitMs: 0,
    });
    const seqs = all.chunks.map((chunk) => chunk.seq);
    const bytes = all.chunks.reduce((sum, c) => sum + Buffer.from(c.chunk, 'base64').length, 0);
    expect(seqs[0]).toBeGreaterThan(1);
    expect(seqs).toEqual(seqs.map((_, index) => seqs[0]! + index));
    expect(seqs[seqs.length - 1]).toBe(lastOutputSeq);
    expect(bytes).toBeLessThanOrEqual(RETAINED_OUTPUT_BYTES);
    expect(bytes).toBeGreaterThan(RETAINED_OUTPUT_BYTES - 64 * 1024);

    const middle = seqs[Math.floor(seqs.length / 2)]!;
    const rest = await client.call<ReadResult>('process/read', {
      processId: 'p',
      afterSeq: middle,
      maxBytes: null,
      waitMs: 0,
    });
    expect(rest.chunks.map((chunk) => chunk.seq)).toEqual(seqs.filter((seq) => seq > middle));
  }, 120_000);
});

describe('RetainedOutput (the ring behind the replay buffer)', () => {
  type Op = { push: number } | 'drop';

  /** Runs `ops` on a ring and on an array of copies; every retained entry must read the same. */
  function checkAgainstCopies(limitBytes: number, ops: readonly Op[]): void {
    const ring = new RetainedOutput(limitBytes);
    const copies: { seq: number; bytes: Buffer }[] = [];
    let seq = 0;
    for (const op of ops) {
      if (op === 'drop') {
        ring.dropOldest();
        copies.shift();
      } else {
        seq += 1;
        const chunk = Buffer.alloc(op.push);
        for (let index = 0; index < chunk.length; index += 1)
          chunk[index] = (seq * 31 + index) & 0xff;
        ring.push(seq, 'stdout', chunk);
        chunk.fill(0); // the ring must have copied it
        copies.push({
          seq,
          bytes: Buffer.from(chunk.map((_, index) => (seq * 31 + index) & 0xff)),
        });
      }
      const entries = [...ring.retained()];
      expect(entries.map((entry) => entry.seq)).toEqual(copies.map((copy) => copy.seq));
      const differing = entries.filter(
        (entry, index) => !ring.chunkBytes(entry).equals(copies[index]!.bytes),
      );
      expect(differing).toEqual([]);
      expect(ring.bytes).toBe(copies.reduce((sum, copy) => sum + copy.bytes.length, 0));
      expect(ring.count).toBe(copies.length);
      expect(ring.oldest()?.seq).toBe(copies[0]?.seq);
    }
  }

  it('gives back the bytes pushed, across wrap-arounds and growths (property)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 64 * 1024 }),
        fc.array(
          fc.oneof(
            fc.integer({ min: 0, max: 20_000 }).map((push): Op => ({ push })),
            fc.constant<Op>('drop'),
          ),
          { maxLength: 60 },
        ),
        checkAgainstCopies,
      ),
      { numRuns: 200 },
    );
  });

  it('holds a steady stream in a ring of the limit plus one chunk, wrapping inside it', () => {
    const ring = new RetainedOutput(64 * 1024);
    const chunk = Buffer.alloc(5000, 7);
    for (let seq = 1; seq <= 1000; seq += 1) {
      ring.push(seq, 'stdout', chunk);
      while (ring.bytes > 64 * 1024) ring.dropOldest();
    }
    expect(ring.count).toBe(13);
    expect([...ring.retained()].every((entry) => ring.chunkBytes(entry).equals(chunk))).toBe(true);
    // Held bytes never passed limit + one chunk, so neither did the ring.
    const capacity = (ring as unknown as { ring: Buffer }).ring.length;
    expect(capacity).toBeLessThanOrEqual(64 * 1024 + 5000);
    expect(capacity).toBeGreaterThanOrEqual(64 * 1024);
  });

  it('stays small for a process that prints little', () => {
    const ring = new RetainedOutput(8 * 1024 * 1024);
    ring.push(1, 'stdout', Buffer.from('hello\n'));
    expect((ring as unknown as { ring: Buffer }).ring.length).toBe(4096);
  });
});
