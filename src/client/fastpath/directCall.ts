/**
 * A call on the live connection without an operator chain, the path of every call with the
 * default options: one Observable, and one response observer the RPC layer reports to
 * (`RpcConnection.start`), instead of `defer`, `switchMap`, `map` and the session guard.
 *
 * Contract: the same values, errors, completion and teardown as the router's general chain,
 * `general()` — which is all the plain twin (bench/plain/client/fastpath/directCall.ts) does —
 * and when no transport is live it is `general()` (spec/client/fastpath/directCall.spec.ts).
 * What it earns is in docs/performance.md ("Fast paths", `npx tsx bench/fast-paths-client.ts`).
 */
import { Observable, type Subscriber } from 'rxjs';
import type { ClientMethod, ResultOf } from '../../protocol/methods.js';
import type { SessionLifecycle } from '../sessionLifecycle.js';
import { buildParams, decodeResultOf, mapCallError, type CallParams } from '../callResults.js';

/** What a direct call shares with its router (src/client/callRouter.ts). */
export interface DirectCallRouter {
  readonly lifecycle: SessionLifecycle;
  /** Calls whose answer has not reached the caller yet; the router's `abortAll` fails them. */
  readonly pending: Set<Subscriber<unknown>>;
  /** Records the loss of a live transport whose connection already closed. */
  noticeDeadRpc(): void;
}

export function directCall<M extends ClientMethod>(
  router: DirectCallRouter,
  method: M,
  params: CallParams<M>,
  mapError: (error: unknown) => unknown,
  general: () => Observable<ResultOf<M>>,
): Observable<ResultOf<M>> {
  const lifecycle = router.lifecycle;
  return new Observable<ResultOf<M>>((subscriber) => {
    if (lifecycle.terminalError) {
      subscriber.error(lifecycle.terminalError);
      return undefined;
    }
    router.noticeDeadRpc();
    const rpc = lifecycle.liveRpc;
    if (rpc === undefined) return general().subscribe(subscriber);
    let built;
    try {
      built = buildParams(params);
    } catch (error) {
      subscriber.error(mapCallError(error));
      return undefined;
    }
    router.pending.add(subscriber);
    const observer = new CallObserver(lifecycle, method, mapError, subscriber);
    const id = rpc.start(method, built, observer);
    return () => {
      router.pending.delete(subscriber);
      if (id !== undefined) rpc.forget(id, observer);
    };
  });
}

/**
 * The response observer of one call: one object per call instead of a closure per callback.
 * A result that arrives after the session ended is an error (spec/environment/
 * retirementOrder.spec.ts).
 */
class CallObserver<M extends ClientMethod> {
  constructor(
    private readonly lifecycle: SessionLifecycle,
    private readonly method: M,
    private readonly mapError: (error: unknown) => unknown,
    private readonly subscriber: Subscriber<ResultOf<M>>,
  ) {}

  next(raw: unknown): void {
    const terminal = this.lifecycle.terminalError;
    if (terminal) {
      this.subscriber.error(terminal);
      return;
    }
    let value: ResultOf<M>;
    try {
      value = decodeResultOf(this.method, raw);
    } catch (error) {
      this.subscriber.error(error);
      return;
    }
    this.subscriber.next(value);
  }

  error(error: unknown): void {
    this.subscriber.error(this.lifecycle.terminalError ?? mapCallError(this.mapError(error)));
  }

  complete(): void {
    this.subscriber.complete();
  }
}
