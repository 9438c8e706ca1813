/**
 * warmUpExecutor: a throwaway executor answers every request, and nothing of it stays behind,
 * so a warmed executor serves exactly as its plain twin (bench/plain/server/fastpath/warmUp.ts,
 * no warm-up) does: the warm-up leaves no state but optimised code.
 */
import { describe, expect, it } from '@jest/globals';
import { TimeoutError } from 'rxjs';
import { warmUpExecutor as plainWarmUp } from '../../../bench/plain/server/fastpath/warmUp.js';
import { warmUpExecutor } from '../../../src/server/fastpath/warmUp.js';

/** Listening servers and sockets this process holds. */
function networkHandles(): number {
  return process
    .getActiveResourcesInfo()
    .filter((name) => name === 'TCPServerWrap' || name === 'TCPSocketWrap').length;
}

/**
 * `networkHandles()` once it is down to `count`, or after 50 turns of the event loop. Each test
 * expects at most the handles it began with: one a previous test closed may be counted in
 * `before` and be gone by the end.
 */
async function networkHandlesSettledAt(count: number): Promise<number> {
  // A closed server or socket lets go of its handle a turn or two after its close resolved.
  for (let turn = 0; turn < 50 && networkHandles() > count; turn += 1)
    await new Promise((resolve) => setTimeout(resolve, 1));
  return networkHandles();
}

describe('warmUpExecutor', () => {
  it('gets an answer to every request, half of them for missing paths', async () => {
    const before = networkHandles();
    const report = await warmUpExecutor({ requests: 360, connections: 3 });
    // Each connection sends 12 rounds of ten requests, five of them about missing paths.
    expect(report).toEqual({ results: 180, notFound: 180 });
    expect(await networkHandlesSettledAt(before)).toBeLessThanOrEqual(before);
  });

  it('gives up at its time limit and still stops its executor', async () => {
    const before = networkHandles();
    await expect(warmUpExecutor({ requests: 1_000_000, timeLimitMs: 50 })).rejects.toBeInstanceOf(
      TimeoutError,
    );
    expect(await networkHandlesSettledAt(before)).toBeLessThanOrEqual(before);
  });

  it('reports the shape its plain twin reports, and leaves as few handles', async () => {
    const before = networkHandles();
    const [fast, plain] = [
      await warmUpExecutor({ requests: 40, connections: 2 }),
      await plainWarmUp(),
    ];
    expect(Object.keys(fast).sort()).toEqual(Object.keys(plain).sort());
    expect(await networkHandlesSettledAt(before)).toBeLessThanOrEqual(before);
  });
});
