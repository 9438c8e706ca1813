/** Plain twin of src/server/fastpath/warmUp.ts: no warm-up; the executor serves cold code. */
import type { WarmUpOptions, WarmUpReport } from '../../../../src/server/fastpath/warmUp.js';

export type { WarmUpOptions, WarmUpReport };

export function warmUpExecutor(_options: WarmUpOptions = {}): Promise<WarmUpReport> {
  return Promise.resolve({ results: 0, notFound: 0 });
}
