/**
 * Plain twin of src/client/fastpath/directCall.ts (bench/support/plainTwins.ts): every call
 * takes the router's general chain.
 */
import type { Observable, Subscriber } from 'rxjs';
import type { CallParams } from '../../../../src/client/callResults.js';
import type { SessionLifecycle } from '../../../../src/client/sessionLifecycle.js';
import type { ClientMethod, ResultOf } from '../../../../src/protocol/methods.js';

export interface DirectCallRouter {
  readonly lifecycle: SessionLifecycle;
  readonly pending: Set<Subscriber<unknown>>;
  noticeDeadRpc(): void;
}

export function directCall<M extends ClientMethod>(
  _router: DirectCallRouter,
  _method: M,
  _params: CallParams<M>,
  _mapError: (error: unknown) => unknown,
  general: () => Observable<ResultOf<M>>,
): Observable<ResultOf<M>> {
  return general();
}
