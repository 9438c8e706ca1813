/**
 * Refresh as a `switchMap` over requests (spec/protocol.md §15): a newer request abandons the
 * older one's stale lookup, handshake or probe; each caller completes with the first refresh
 * that finishes after its own request (its own, or the one that superseded it); closing fails
 * every caller still waiting. Guarded by spec/environment/lifecycleTiming.spec.ts ("refresh is
 * a switchMap over refresh requests") and the seed twins in clientRefresh.spec.ts.
 */
import {
  Observable,
  Subject,
  type SchedulerLike,
  type Subscription,
  catchError,
  defer,
  filter,
  map,
  of,
  switchMap,
  take,
  throwError,
  throwIfEmpty,
  timeout,
} from 'rxjs';
import { ProtocolError } from '../protocol/errors.js';
import { EnvironmentRegistryRequestError } from '../registry/errors.js';
import type { NoiseRendezvousConnectBundle } from '../registry/index.js';
import { formatDuration } from '../transport/formatDuration.js';
import type { NoiseTransportParams } from './transportParams.js';

/** How the refresh that answers a ticket ended, or the queue's end. */
type RefreshOutcome =
  | { readonly kind: 'finished'; readonly ticket: number; readonly error?: unknown }
  | { readonly kind: 'closed'; readonly error: unknown };

export class RefreshQueue {
  private lastTicket = 0;
  /** The newest ticket a finished refresh answered. */
  private answered = 0;
  private readonly requests = new Subject<number>();
  private readonly outcomes = new Subject<RefreshOutcome>();
  private readonly running: Subscription;

  /**
   * @param refreshOnce one refresh, cold; unsubscribed when a newer request supersedes it.
   * @param onChange called when `busy` may have changed.
   */
  constructor(
    refreshOnce: () => Observable<void>,
    private readonly onChange: () => void,
  ) {
    this.running = this.requests
      .pipe(
        switchMap((ticket) =>
          refreshOnce().pipe(
            map((): RefreshOutcome => ({ kind: 'finished', ticket })),
            catchError((error: unknown) => of<RefreshOutcome>({ kind: 'finished', ticket, error })),
          ),
        ),
      )
      .subscribe((outcome) => {
        if (outcome.kind === 'finished') this.answered = Math.max(this.answered, outcome.ticket);
        this.outcomes.next(outcome);
        onChange();
      });
  }

  /** True from a request until a refresh answering it has finished. */
  get busy(): boolean {
    return this.answered < this.lastTicket;
  }

  /** Requests a refresh; completes (or errors) with the first one that ends after this call. */
  request(): Observable<void> {
    return new Observable<void>((subscriber) => {
      const ticket = ++this.lastTicket;
      const subscription = this.outcomes
        .pipe(
          filter((outcome) => outcome.kind === 'closed' || outcome.ticket >= ticket),
          take(1),
        )
        .subscribe((outcome) => {
          if (outcome.error === undefined) subscriber.complete();
          else subscriber.error(outcome.error);
        });
      this.onChange();
      this.requests.next(ticket);
      return subscription;
    });
  }

  /** Stops refreshing; callers still waiting get `error`. */
  close(error: unknown): void {
    this.answered = this.lastTicket;
    this.outcomes.next({ kind: 'closed', error });
    this.running.unsubscribe();
  }
}

/** A refresh's registry lookup: one fresh connect bundle, within `timeoutMs` (spec §15 step 1). */
export function lookupRefreshBundle(
  noise: NoiseTransportParams,
  timeoutMs: number,
  scheduler: SchedulerLike | undefined,
): Observable<NoiseRendezvousConnectBundle> {
  return defer(() => noise.provider.connectBundle(noise.identity.publicKey().toJSON())).pipe(
    take(1),
    throwIfEmpty(() => new ProtocolError('registry lookup returned no connect bundle')),
    timeout({
      first: timeoutMs,
      ...(scheduler ? { scheduler } : {}),
      with: () =>
        throwError(
          () =>
            new EnvironmentRegistryRequestError(
              'timeout',
              `registry lookup timed out after ${formatDuration(timeoutMs)}`,
            ),
        ),
    }),
  );
}
