/**
 * Delays a peer chooses above Node's timer limit (2^31-1 ms) are clamped (issue #14, "Timer
 * overflow"): `process/read` with a huge `waitMs` waits quietly for output, where Node used to
 * fall back to a 1 ms timer and print a `TimeoutOverflowWarning` each time (a CPU spin and a
 * stderr flood), and `http/request` with a huge `timeoutMs` does not time out after 1 ms. The
 * executor is `execrx serve` in its own process, so its stderr and CPU time are its own. The
 * binary takes any u64 `waitMs` (FINDINGS.md); above 2^53 ours answers `invalid number`.
 */
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { assertBuilt, killRunningClis, startCli, type RunningCli } from '../cli/support/runCli.js';
import { RawClient, startParams } from './rawClient.js';

const HUGE_MS = 2 ** 31; // one past what a Node timer holds
const LARGEST_MS = Number.MAX_SAFE_INTEGER;

let serve: RunningCli;
let url: string;
/** Everything `execrx serve` has printed on stderr. */
let stderr = '';
const clients: RawClient[] = [];

beforeAll(async () => {
  assertBuilt();
  serve = startCli(['serve', '--no-warm-up', '--listen', 'ws://127.0.0.1:0'], {
    timeoutMs: 120_000,
  });
  serve.child.stderr!.on('data', (text: string) => (stderr += text));
  url = (await serve.stdoutLines(1))[0] as string;
});
afterEach(async () => {
  await Promise.all(clients.splice(0).map((client) => client.terminate()));
});
afterAll(killRunningClis);

async function connect(): Promise<RawClient> {
  const client = await RawClient.connect(url);
  clients.push(client);
  await client.handshake();
  return client;
}

/** User plus system CPU time of process `pid`, in clock ticks (usually 10 ms). */
function cpuTicks(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return Number(fields[11]) + Number(fields[12]);
}

describe('peer-chosen delays above 2^31-1 ms', () => {
  it.each([HUGE_MS, LARGEST_MS])(
    'process/read with waitMs %d waits for output without spinning or warning',
    async (waitMs) => {
      const client = await connect();
      const processId = `wait-${waitMs}`;
      await client.call(
        'process/start',
        startParams(processId, ['sh', '-c', 'sleep 2; echo late; sleep 30']),
      );
      const ticksBefore = cpuTicks(serve.child.pid!);
      const started = Date.now();
      const reply = await client.request(
        'process/read',
        { processId, afterSeq: 0, maxBytes: null, waitMs },
        20_000,
      );
      const waited = Date.now() - started;
      const ticks = cpuTicks(serve.child.pid!) - ticksBefore;
      client.post('process/terminate', { processId });
      const result = reply.result as { chunks: { chunk: string }[] };
      expect(Buffer.from(result.chunks[0]!.chunk, 'base64').toString()).toBe('late\n');
      expect(waited).toBeGreaterThanOrEqual(1_000);
      expect(stderr).not.toMatch(/TimeoutOverflowWarning/);
      // A 1 ms timer loop costs CPU all along; waiting costs next to nothing.
      expect(ticks).toBeLessThan(50);
    },
    60_000,
  );

  describe('http/request', () => {
    let origin: Server;
    beforeAll(async () => {
      origin = createServer((_request, response) => {
        setTimeout(() => response.end('slow'), 300);
      });
      await new Promise<void>((resolve) => origin.listen(0, '127.0.0.1', resolve));
    });
    afterAll(() => new Promise((resolve) => origin.close(resolve)));

    it('with timeoutMs 2^31 does not time out at once', async () => {
      const client = await connect();
      const { port } = origin.address() as AddressInfo;
      const reply = await client.request(
        'http/request',
        {
          method: 'GET',
          url: `http://127.0.0.1:${port}/`,
          headers: [],
          bodyBase64: null,
          timeoutMs: HUGE_MS,
          requestId: 'slow',
          streamResponse: false,
        },
        10_000,
      );
      expect(reply.error).toBeUndefined();
      expect(
        Buffer.from((reply.result as { bodyBase64: string }).bodyBase64, 'base64').toString(),
      ).toBe('slow');
    });
  });
});
