/** Sample statistics in the shape of upstream `remote_latency.rs` (`summarize`). */

export interface Summary {
  readonly min: number;
  readonly p50: number;
  readonly p95: number;
  readonly max: number;
  readonly mean: number;
}

/** Percentile p as upstream computes it: the ceil(n·p/100)-th smallest sample. */
export function summarize(samples: readonly number[]): Summary {
  if (samples.length === 0) throw new Error('no samples to summarize');
  const sorted = [...samples].sort((a, b) => a - b);
  const percentile = (p: number): number =>
    sorted[Math.max(0, Math.ceil((sorted.length * p) / 100) - 1)] as number;
  return {
    min: sorted[0] as number,
    p50: percentile(50),
    p95: percentile(95),
    max: sorted[sorted.length - 1] as number,
    mean: sorted.reduce((sum, value) => sum + value, 0) / sorted.length,
  };
}

/** Milliseconds since `start` (from `process.hrtime.bigint()`). */
export function elapsedMs(start: bigint): number {
  return Number(process.hrtime.bigint() - start) / 1e6;
}

/**
 * A 95% bootstrap interval for the ratio of two p50s, `ours / theirs`: both sample sets are
 * resampled with replacement 2,000 times (a fixed seed, so a run prints the same interval
 * for the same samples). It says how far the printed ratio may be from the true one: with
 * 30 samples a run's p50 ratio moves by several percent on noise alone.
 */
export function p50RatioInterval(
  ours: readonly number[],
  theirs: readonly number[],
): readonly [number, number] {
  let state = 0x9e3779b9;
  const next = (bound: number): number => {
    state = (Math.imul(state, 1_664_525) + 1_013_904_223) >>> 0; // LCG (Numerical Recipes)
    return Math.floor((state / 2 ** 32) * bound);
  };
  const resample = (samples: readonly number[]): number[] =>
    samples.map(() => samples[next(samples.length)] as number);
  const ratios: number[] = [];
  for (let round = 0; round < 2_000; round += 1)
    ratios.push(summarize(resample(ours)).p50 / summarize(resample(theirs)).p50);
  ratios.sort((a, b) => a - b);
  return [ratios[50] as number, ratios[1_949] as number];
}
