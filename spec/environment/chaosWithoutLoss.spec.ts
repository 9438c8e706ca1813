/**
 * Chaos without loss (issue 14 item 5), at a small size: through a seeded chaos relay that
 * drops, delays, duplicates and reorders frames and cuts sockets, a 4 MiB output stream, the
 * stdin writes that drive it and interleaved file requests arrive exactly once and in order
 * (sha256 of the whole stream, byte-exact file round trips), or fail with a typed error and
 * are retried on the session the environment layer recovered. The long soak is
 * bench/chaos-soak.ts. The scenario and its 1 MiB outage bound: spec/support/chaosScenario.ts.
 */
import { describe, expect, it } from '@jest/globals';
import { runChaosScenario, type ChaosPath } from '../support/chaosScenario.js';

const BYTES = 4 * 1024 * 1024;
const SEED = Number(process.env.CHAOS_SEED ?? 1);

describe.each<ChaosPath>(['plain', 'noise'])('chaos without loss: %s path', (path) => {
  it('delivers every byte, write and request exactly once and in order across faults', async () => {
    const result = await runChaosScenario({ path, bytes: BYTES, seed: SEED, timeoutMs: 150_000 });
    expect(result.bytesVerified).toBe(BYTES);
    expect(result.fileRoundTrips).toBe(result.writes);
    // The faults really happened, and were survived on the same session.
    expect(result.chaos.cuts).toBeGreaterThan(0);
    expect(result.chaos.duplicated + result.chaos.dropped + result.chaos.delayed).toBeGreaterThan(
      0,
    );
    if (path === 'noise') expect(result.chaos.reordered).toBeGreaterThan(0);
    expect(result.sessionKept).toBe(true);
  }, 180_000);
});
