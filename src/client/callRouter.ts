/**
 * Call routing: the one typed primitive `call(method, params, options)` every client request
 * goes through, with its params and result types taken from the method table
 * (protocol/methods.ts). What a call does while the session is not connected is an option:
 *
 * - `recovery: 'wait'` (default): wait for the resumed transport, then send.
 * - `recovery: 'failFast'`: error at once with `exec-server environment is recovering`.
 * - `recovery: 'resend'`: like `wait`, and when the transport is lost while the call is in
 *   flight, send the same params again on the resumed transport (`process/read`,
 *   `process/write` keep their `writeId`, spec §14.4).
 *
 * Contract of every call (spec §16, spec/environment/retirementOrder.spec.ts): once the
 * session is retired or failed, the call errors with that error, even when its result already
 * arrived from the executor; pending calls are aborted by `abortAll` before the session fails
 * its process handles and body streams; transport-closed errors become `exec-server transport
 * disconnected` (§11.3).
 */
import {
  Observable,
  type SchedulerLike,
  type Subscriber,
  catchError,
  defer,
  filter,
  map,
  of,
  switchMap,
  take,
  throwError,
  timeout,
} from 'rxjs';
import {
  DisconnectedError,
  DisconnectReason,
  ExecServerError,
  TimeoutError,
  isTransportClosed,
} from '../protocol/errors.js';
import type { ClientMethod, ParamsOf, ResultOf } from '../protocol/methods.js';
import type { RpcConnection } from '../rpc/rpcConnection.js';
import { formatDuration } from '../transport/formatDuration.js';
import type { SessionLifecycle } from './sessionLifecycle.js';
import { buildParams, decodeResultOf, mapCallError, type CallParams } from './callResults.js';
import { directCall, type DirectCallRouter } from './fastpath/directCall.js';

export type RecoveryMode = 'wait' | 'failFast' | 'resend';

export interface CallOptions {
  /** While the session is not connected: wait (default), fail fast, or wait and re-send. */
  readonly recovery?: RecoveryMode;
  /** Maps executor errors (before the session's own mapping), e.g. -32004 to NotFoundError. */
  readonly mapError?: (error: unknown) => unknown;
  /**
   * Budget for the answer once the request is sent: `RpcTimedOut`, "exec-server protocol
   * error: timed out waiting for exec-server `<m>` response after <t>" (spec §17.1).
   */
  readonly timeoutMs?: number;
  /** On timeout, close the silent transport so recovery replaces it (when recovery is on). */
  readonly replaceTransportOnTimeout?: boolean;
}

export type { CallParams } from './callResults.js';

/** What the router needs from its session. */
export interface CallRouterHost {
  readonly lifecycle: SessionLifecycle;
  readonly scheduler: SchedulerLike | undefined;
  readonly recovery: boolean;
  /** Records the loss of `rpc` (a call may notice it before the connection announces it). */
  transportLost(rpc: RpcConnection, reason: ExecServerError): void;
}

export class CallRouter implements DirectCallRouter {
  /**
   * The subscriber of each call whose answer has not reached its caller yet — including one
   * the RPC layer already routed out of its own pending table — failed once with the terminal
   * error by `abortAll`. This is the "answer arrived but the session is retired" rule: the
   * routed twins of spec/environment/retirementOrder.spec.ts fail without it, since closing
   * the connection only rejects what is still in the RPC layer's table.
   * A set rather than a Subject: adding and removing one per call is cheaper than a subscription.
   * @internal Shared with src/client/fastpath/directCall.ts only.
   */
  readonly pending = new Set<Subscriber<unknown>>();

  constructor(private readonly host: CallRouterHost) {}

  /** @internal The session's lifecycle (src/client/fastpath/directCall.ts reads it). */
  get lifecycle(): SessionLifecycle {
    return this.host.lifecycle;
  }

  /** Sends `method` with `params`; emits the decoded result once. Cold. */
  call<M extends ClientMethod>(
    method: M,
    params: CallParams<M>,
    options: CallOptions = {},
  ): Observable<ResultOf<M>> {
    if ((options.recovery ?? 'wait') === 'wait' && options.timeoutMs === undefined) {
      return directCall(this, method, params, options.mapError ?? identity, () =>
        this.chain(method, params, options),
      );
    }
    return this.chain(method, params, options);
  }

  /**
   * @internal The general path of a call, as operators: wait for (or fail without) a live
   * transport as `options` say, send, decode, guard with the session's end.
   */
  chain<M extends ClientMethod>(
    method: M,
    params: CallParams<M>,
    options: CallOptions,
  ): Observable<ResultOf<M>> {
    return this.guard(
      defer(() => this.routed(method, params, options)).pipe(
        map((raw) => decodeResultOf(method, raw)),
      ),
      options.mapError ?? identity,
    );
  }

  /**
   * Guards an event stream (process events, HTTP bodies) with the session's end: it errors
   * with the terminal error, but is not aborted with the pending calls — the session fails
   * it afterwards, with its process handles and body streams (spec §16 step 4).
   */
  guardStream<T>(source: Observable<T>): Observable<T> {
    return this.guardWith(source, identity, false);
  }

  /** Fails every pending call with `error` (spec §16 step 2). */
  abortAll(error: DisconnectedError): void {
    const aborts = [...this.pending];
    this.pending.clear();
    for (const abort of aborts) abort.error(error);
  }

  /** The raw answer of a call with options, sent on the transport its mode allows. */
  private routed<M extends ClientMethod>(
    method: M,
    params: CallParams<M>,
    options: CallOptions,
  ): Observable<unknown> {
    const send = (rpc: RpcConnection, sent: ParamsOf<M>): Observable<unknown> => {
      const request = rpc.request(method, sent);
      const ms = options.timeoutMs;
      if (ms === undefined) return request;
      return request.pipe(
        timeout({
          first: ms,
          ...(this.host.scheduler ? { scheduler: this.host.scheduler } : {}),
          with: () => {
            // A silent transport is replaced: let recovery take over (spec §11.3).
            if (options.replaceTransportOnTimeout && this.host.recovery) rpc.close();
            return throwError(
              () =>
                new TimeoutError(
                  `exec-server protocol error: timed out waiting for exec-server \`${method}\` response after ${formatDuration(ms)}`,
                ),
            );
          },
        }),
      );
    };
    switch (options.recovery ?? 'wait') {
      case 'failFast':
        return send(this.liveNow(), buildParams(params));
      case 'wait':
        return this.awaitLive().pipe(switchMap((rpc) => send(rpc, buildParams(params))));
      case 'resend': {
        // Built once: a re-sent request carries the same params (and `writeId`).
        const sent = buildParams(params);
        const attempt = (): Observable<unknown> =>
          this.awaitLive().pipe(
            switchMap((rpc) =>
              send(rpc, sent).pipe(
                catchError((error: unknown) => {
                  if (
                    !isTransportClosed(error) ||
                    !rpc.isClosed ||
                    this.host.lifecycle.terminalError
                  ) {
                    return throwError(() => error);
                  }
                  // The connection fails its callers before announcing its end: record the
                  // loss with its real reason now, then wait for the resumed transport.
                  if (error instanceof ExecServerError) this.host.transportLost(rpc, error);
                  return defer(attempt);
                }),
              ),
            ),
          );
        return attempt();
      }
    }
  }

  /** The live transport; waits while recovering; errors once the session is terminal. */
  private awaitLive(): Observable<RpcConnection> {
    const lifecycle = this.host.lifecycle;
    return defer(() => {
      this.noticeDeadRpc();
      const terminal = lifecycle.terminalError;
      if (terminal) return throwError(() => terminal);
      const live = lifecycle.liveRpc;
      if (live !== undefined) return of(live);
      return lifecycle.state$.pipe(
        filter((state) => state !== 'recovering'),
        take(1),
        map(() => {
          const terminalNow = lifecycle.terminalError;
          if (terminalNow) throw terminalNow;
          const rpc = lifecycle.liveRpc;
          if (rpc === undefined)
            throw new DisconnectedError(DisconnectReason.transportDisconnected);
          return rpc;
        }),
      );
    });
  }

  /** The live transport right now, or `exec-server environment is recovering`. */
  private liveNow(): RpcConnection {
    this.noticeDeadRpc();
    const lifecycle = this.host.lifecycle;
    const terminal = lifecycle.terminalError;
    if (terminal) throw terminal;
    const rpc = lifecycle.liveRpc;
    if (rpc === undefined) throw new DisconnectedError(DisconnectReason.recovering);
    return rpc;
  }

  /** @internal Records the loss of a live transport whose connection already closed. */
  noticeDeadRpc(): void {
    const rpc = this.host.lifecycle.liveRpc;
    if (rpc?.isClosed) {
      this.host.transportLost(rpc, new DisconnectedError(DisconnectReason.transportDisconnected));
    }
  }

  /**
   * Binds an operation that is not one call (a resume, a process start with its cleanup) to
   * the session as a call is: aborted with the pending calls, terminal error wins.
   */
  bindOperation<T>(source: Observable<T>): Observable<T> {
    return this.guardWith(source, identity, true);
  }

  private guard<T>(source: Observable<T>, mapError: (error: unknown) => unknown): Observable<T> {
    return this.guardWith(source, mapError, true);
  }

  private guardWith<T>(
    source: Observable<T>,
    mapError: (error: unknown) => unknown,
    abortWithCalls: boolean,
  ): Observable<T> {
    const lifecycle = this.host.lifecycle;
    return new Observable<T>((subscriber) => {
      if (lifecycle.terminalError) {
        subscriber.error(lifecycle.terminalError);
        return undefined;
      }
      if (abortWithCalls) this.pending.add(subscriber);
      const inner = source.subscribe({
        next: (value) => {
          const terminal = lifecycle.terminalError;
          if (terminal) subscriber.error(terminal);
          else subscriber.next(value);
        },
        error: (error: unknown) =>
          subscriber.error(lifecycle.terminalError ?? mapCallError(mapError(error))),
        complete: () => subscriber.complete(),
      });
      return () => {
        if (abortWithCalls) this.pending.delete(subscriber);
        inner.unsubscribe();
      };
    });
  }
}

/**
 * One request on a given connection (not the session's live one: a resume catching up on
 * a transport not yet installed), with its result decoded by the method table.
 */
export function requestOn<M extends ClientMethod>(
  rpc: RpcConnection,
  method: M,
  params: ParamsOf<M>,
): Observable<ResultOf<M>> {
  return rpc.request(method, params).pipe(map((raw) => decodeResultOf(method, raw)));
}

function identity<T>(value: T): T {
  return value;
}
