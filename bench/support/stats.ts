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
