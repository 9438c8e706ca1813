/**
 * The recovery task (spec/protocol.md §14.2): after a transport loss, reopen a transport with
 * the session's reconnect strategy and resume the same session on it, retrying retryable
 * errors with the strategy's backoff, all within one deadline. Giving up fails the session.
 */
import {
  EMPTY,
  Observable,
  catchError,
  defer,
  map,
  retry,
  switchMap,
  take,
  tap,
  throwError,
  throwIfEmpty,
  timeout,
  timer,
  type SchedulerLike,
} from 'rxjs';
import type { ExecServerClient } from '../client/execServerClient.js';
import { ProtocolError, TimeoutError } from '../protocol/errors.js';
import { formatDuration } from '../transport/formatDuration.js';
import { SESSION_RECOVERY_TIMEOUT_MS } from './constants.js';
import { isRetryableRecoveryError } from './errors.js';
import type { ReconnectStrategy } from './sessionConnector.js';

/** Bounds and hooks of one `recoverSession` run. */
export interface RecoveryOptions {
  /** Give up after this long (default 25 s). */
  readonly deadlineMs?: number;
  readonly scheduler?: SchedulerLike;
  /** Called with the registration id of the executor the session resumed on. */
  readonly onResumed?: (registrationId: string | undefined) => void;
  /**
   * Called when a try failed with a retryable error (`delayMs`: the wait before the next) and
   * when that next try starts (`delayMs` undefined).
   */
  readonly onRetry?: (retry: RecoveryRetry) => void;
}

/** A resume try that follows a failed one. */
export interface RecoveryRetry {
  /** The number of the next try, from 2. */
  readonly attempt: number;
  /** The wait before it starts; undefined once it has started. */
  readonly delayMs: number | undefined;
  /** Why the previous try failed. */
  readonly error: unknown;
}

/**
 * Cold: resumes `client` (state `recovering`) and completes; when recovery gives up it fails
 * the client with "<reason>; failed to resume exec-server session: <last error>" and completes.
 * Unsubscribing abandons the attempt in flight (lookup, handshake or resume).
 */
export function recoverSession(
  client: ExecServerClient,
  strategy: ReconnectStrategy,
  reason: string,
  options: RecoveryOptions = {},
): Observable<never> {
  const deadlineMs = options.deadlineMs ?? SESSION_RECOVERY_TIMEOUT_MS;
  const scheduler = options.scheduler;
  const resumeOnce = defer(() => strategy.reopen()).pipe(
    take(1),
    throwIfEmpty(() => new ProtocolError('reconnect strategy ended without a transport')),
    switchMap(({ transport, registrationId }) =>
      client.resume(transport).pipe(map(() => registrationId)),
    ),
  );
  return resumeOnce.pipe(
    retry({
      delay: (error: unknown, retryCount) => {
        if (!isRetryableRecoveryError(error)) return throwError(() => error);
        const delayMs = strategy.retryDelayMs(client.sessionId, retryCount - 1);
        const attempt = retryCount + 1;
        options.onRetry?.({ attempt, delayMs, error });
        return timer(delayMs, scheduler).pipe(
          tap(() => options.onRetry?.({ attempt, delayMs: undefined, error })),
        );
      },
    }),
    timeout({
      first: deadlineMs,
      ...(scheduler ? { scheduler } : {}),
      with: () =>
        throwError(
          () => new TimeoutError(`recovery timed out after ${formatDuration(deadlineMs)}`),
        ),
    }),
    take(1),
    tap((registrationId) => options.onResumed?.(registrationId)),
    switchMap(() => EMPTY),
    catchError((error: unknown) => {
      const detail = error instanceof Error ? error.message : String(error);
      client.fail(`${reason}; failed to resume exec-server session: ${detail}`);
      return EMPTY;
    }),
  );
}
