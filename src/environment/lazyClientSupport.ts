/**
 * The options of `LazyRemoteExecServerClient` and the small pieces it is built from: the
 * refresh probe, its errors, and the strategy of a session it did not connect itself.
 */
import { map, throwError, type Observable, type SchedulerLike } from 'rxjs';
import type { ExecServerClient } from '../client/execServerClient.js';
import { DisconnectedError, ProtocolError } from '../protocol/errors.js';
import {
  connectSession,
  type ConnectedSession,
  type ConnectOptions,
  type ReconnectStrategy,
} from './sessionConnector.js';
import type { ExecServerTransportParams } from './transportParams.js';

export interface LazyRemoteClientOptions {
  /** Scheduler for every deadline and backoff (tests pass a TestScheduler). */
  readonly scheduler?: SchedulerLike;
  /** Recovery deadline after a transport loss, default 25 s. */
  readonly recoveryTimeoutMs?: number;
  /** Bound of the refresh registry lookup, default 10 s. */
  readonly refreshLookupTimeoutMs?: number;
  /** Network policy and trace context of every session (kept through recovery and refresh). */
  readonly session?: Pick<
    ConnectOptions,
    'networkPolicy' | 'networkPolicyTimeoutMs' | 'traceContext'
  >;
}

/** The live `environment/status` round trip that decides a refresh. */
export function probe(client: ExecServerClient): Observable<void> {
  return client.environmentStatus().pipe(map((): void => undefined));
}

/** What every call fails with after `close()`. */
export function closedError(): DisconnectedError {
  return new DisconnectedError('exec-server environment client was closed');
}

/** Why a `fromConnected` client cannot reconnect (not retryable: recovery stops at once). */
export function notReopenableError(): ProtocolError {
  return new ProtocolError(
    'exec-server session was connected by the caller (fromConnected): it cannot be reconnected',
  );
}

/** The strategy of a `fromConnected` session: nothing to reopen, recovery fails at once. */
export const NOT_REOPENABLE: ReconnectStrategy = {
  kind: 'websocket',
  reopen: () => throwError(() => notReopenableError()),
  retryDelayMs: () => 0,
};

/** Retired or failed: the session's calls fail; a new one is needed. */
export function isTerminal(client: ExecServerClient): boolean {
  return client.state === 'failed' || client.state === 'retired';
}

/** A new session with `params`; none (a `fromConnected` client) is notReopenableError. */
export function connectWith(
  params: ExecServerTransportParams | undefined,
  options: ConnectOptions,
): Observable<ConnectedSession> {
  if (params === undefined) return throwError(() => notReopenableError());
  return connectSession(params, options);
}
