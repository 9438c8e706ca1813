/** Plain twin of src/server/fastpath/warmUp.ts: no warm-up; the executor serves cold code. */

/** How much `warmUpExecutor` sends and how long it may take (ignored here). */
export interface WarmUpOptions {
  readonly requests?: number;
  readonly connections?: number;
  readonly timeLimitMs?: number;
}

/** What the throwaway executor answered: nothing, there is none. */
export interface WarmUpReport {
  readonly results: number;
  readonly notFound: number;
}

export function warmUpExecutor(_options: WarmUpOptions = {}): Promise<WarmUpReport> {
  return Promise.resolve({ results: 0, notFound: 0 });
}
