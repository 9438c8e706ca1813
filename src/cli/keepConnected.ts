/**
 * Keeps a `recovery: true` session alive for the CLI: whenever it starts recovering, open a
 * fresh transport and resume, retrying retryable failures until the executor's detached
 * session would be gone; then give up by failing the session.
 */
import {
  EMPTY,
  type Subscription,
  catchError,
  defer,
  exhaustMap,
  filter,
  retry,
  switchMap,
  tap,
  throwError,
  timeout,
  timer,
} from 'rxjs';
import { isRetryableResumeError, type ExecServerClient } from '../client/index.js';
import type { Endpoint } from './endpoint.js';
import type { StatusLine } from './statusLine.js';

/** Shorter than the executor's 30 s detached-session TTL (the client's own 25 s budget). */
const RESUME_BUDGET_MS = 25_000;
const RESUME_RETRY_DELAY_MS = 500;

export function keepConnected(
  client: ExecServerClient,
  endpoint: Endpoint,
  status: StatusLine,
): Subscription {
  return client.state$
    .pipe(
      filter((state) => state === 'recovering'),
      exhaustMap(() => {
        status.show(`connection to ${endpoint.label} lost; reconnecting…`);
        let lastError: unknown;
        return defer(() =>
          endpoint.connect().pipe(switchMap((transport) => client.resume(transport))),
        ).pipe(
          retry({
            delay: (error: unknown) => {
              lastError = error;
              return isRetryableResumeError(error)
                ? timer(RESUME_RETRY_DELAY_MS)
                : throwError(() => error);
            },
          }),
          timeout({
            first: RESUME_BUDGET_MS,
            with: () =>
              throwError(
                () =>
                  new Error(
                    `gave up after ${RESUME_BUDGET_MS / 1000} s (last error: ${messageOf(lastError ?? 'none')})`,
                  ),
              ),
          }),
          tap({ complete: () => status.clear() }),
          catchError((error: unknown) => {
            status.clear();
            client.fail(`could not reconnect to ${endpoint.label}: ${messageOf(error)}`);
            return EMPTY;
          }),
        );
      }),
    )
    .subscribe();
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
