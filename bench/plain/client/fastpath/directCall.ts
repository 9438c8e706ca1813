/**
 * Plain twin of src/client/fastpath/directCall.ts (bench/support/plainTwins.ts): every call
 * takes the router's general chain.
 */
import type { Observable } from 'rxjs';
import type { CallParams } from '../../../../src/client/callResults.js';
import type { DirectCallRouter } from '../../../../src/client/fastpath/directCall.js';
import type { ClientMethod, ResultOf } from '../../../../src/protocol/methods.js';

export type { DirectCallRouter };

export function directCall<M extends ClientMethod>(
  _router: DirectCallRouter,
  _method: M,
  _params: CallParams<M>,
  _mapError: (error: unknown) => unknown,
  general: () => Observable<ResultOf<M>>,
): Observable<ResultOf<M>> {
  return general();
}
