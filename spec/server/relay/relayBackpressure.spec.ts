/**
 * Process output over a Noise relay stream is paced by the relay socket, as on the plain
 * WebSocket path: while the peer does not read, the executor stops reading the child instead
 * of queueing its output, and nothing is lost or reordered when the peer reads again.
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import type { Duplex } from 'node:stream';
import { startNoiseExecServer } from '../../support/noiseExecServer.js';
import { RawRelayClient } from './rawRelayClient.js';
import { FLOOD_PROCESS_START_PARAMS } from '../../support/floodProcess.js';

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!();
});

describe('process output backpressure over a Noise relay stream', () => {
  it('stops reading a child while the relay peer does not read, losing and reordering nothing', async () => {
    const server = await startNoiseExecServer();
    cleanups.push(() => server.stop());
    const client = await RawRelayClient.open(server.target);
    cleanups.push(() => client.close());
    const stream = await client.openStream();
    await stream.initialize();
    const started = await stream.request('process/start', FLOOD_PROCESS_START_PARAMS);
    expect(started.error).toBeUndefined();
    const socket = (client.socket as unknown as { _socket: Duplex })._socket;
    socket.pause();
    const before = process.memoryUsage().arrayBuffers;
    await new Promise((resolve) => setTimeout(resolve, 700));
    // Unpaced, the executor would have sealed and queued hundreds of MiB by now.
    expect(process.memoryUsage().arrayBuffers - before).toBeLessThan(48 * 1024 * 1024);
    socket.resume();

    const events: Array<{ method: string; seq: unknown; chunk: unknown }> = [];
    const take = async (until: () => boolean): Promise<void> => {
      for (let read = 0; read < 100_000 && !until(); read++) {
        const message = await stream.nextMessage();
        const params = message.params as Record<string, unknown> | undefined;
        if (typeof message.method === 'string' && params?.processId === 'flood') {
          events.push({ method: message.method, seq: params.seq, chunk: params.chunk });
        }
      }
    };
    await take(() => events.filter((event) => event.method === 'process/output').length >= 2048);
    stream.send({ id: 99, method: 'process/terminate', params: { processId: 'flood' } });
    await take(() => events.some((event) => event.method === 'process/closed'));

    const seqs = events.map((event) => event.seq);
    expect(seqs).toEqual(seqs.map((_, index) => index + 1));
    for (const event of events.filter((e) => e.method === 'process/output')) {
      expect(Buffer.from(String(event.chunk), 'base64').every((byte) => byte === 0)).toBe(true);
    }
  }, 30_000);
});
