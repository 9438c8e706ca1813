/**
 * The replay buffer of an attached, caught-up process (managedProcess.ts): beyond
 * RETAINED_OUTPUT_BYTES the oldest output is dropped, and `process/read` returns the newest
 * output as one contiguous run of seqs ending where the live stream ended, also from an
 * `afterSeq` in its middle.
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import { RETAINED_OUTPUT_BYTES } from '../../src/server/managedProcess.js';
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
