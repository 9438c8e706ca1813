/**
 * One shared connection attempt (spec/protocol.md §13.1): every caller handling the same
 * outage joins it and gets the same result; a refresh can cancel it, which unsubscribes the
 * lookup or handshake in flight and fails the joined callers with "connection attempt was
 * superseded".
 */
import { AsyncSubject, type Observable, type Subscription, defer, tap } from 'rxjs';
import type { NoiseRendezvousConnectBundle } from '../registry/index.js';
import { ConnectionAttemptError, supersededError } from './errors.js';
import type { ManagedSession } from './managedSession.js';

export type AttemptOutcome =
  { readonly session: ManagedSession } | { readonly error: ConnectionAttemptError };

/**
 * `idle` until first used, `running` while the connect is in flight (`subscription` is
 * undefined while `connect()` is still subscribing), `settled` with the remembered outcome.
 */
type AttemptPhase =
  | { readonly kind: 'idle' }
  | { readonly kind: 'running'; readonly subscription: Subscription | undefined }
  | { readonly kind: 'settled'; readonly outcome: AttemptOutcome };

export class ConnectionAttempt {
  private phase: AttemptPhase = { kind: 'idle' };
  /** Superseded by a refresh (in any phase): it must never install. */
  private superseded = false;
  private readonly result = new AsyncSubject<ManagedSession>();

  /**
   * @param prefetchedBundle the bundle a refresh looked up, used for this attempt's connect.
   * @param onChange called when the attempt starts and when it settles.
   */
  constructor(
    readonly prefetchedBundle?: NoiseRendezvousConnectBundle,
    private readonly onChange?: (attempt: ConnectionAttempt) => void,
  ) {}

  /** Set by a refresh that replaced this attempt: it must never install. */
  get cancelled(): boolean {
    return this.superseded;
  }

  /** The remembered result, once settled. */
  get outcome(): AttemptOutcome | undefined {
    return this.phase.kind === 'settled' ? this.phase.outcome : undefined;
  }

  /** Started and not settled yet. */
  get inFlight(): boolean {
    return this.phase.kind === 'running';
  }

  /** Starts the attempt on first use (hot from then on), or joins it. */
  run(connect: () => Observable<ManagedSession>): Observable<ManagedSession> {
    if (this.superseded && this.phase.kind !== 'settled') {
      this.settle({ error: new ConnectionAttemptError(supersededError()) });
    }
    if (this.phase.kind === 'idle') {
      this.phase = { kind: 'running', subscription: undefined };
      this.onChange?.(this);
      const subscription = connect().subscribe({
        next: (session) => this.settle({ session }),
        error: (error: unknown) => this.settle({ error: new ConnectionAttemptError(error) }),
      });
      if (this.phase.kind === 'running') this.phase = { kind: 'running', subscription };
    }
    return this.result.asObservable();
  }

  /** Supersedes the attempt: aborts what is in flight; joined callers get the superseded error. */
  cancel(): void {
    if (this.superseded) return;
    this.superseded = true;
    if (this.phase.kind === 'running') {
      this.phase.subscription?.unsubscribe();
      this.settle({ error: new ConnectionAttemptError(supersededError()) });
    }
  }

  private settle(outcome: AttemptOutcome): void {
    if (this.phase.kind === 'settled') return;
    this.phase = { kind: 'settled', outcome };
    this.onChange?.(this);
    if ('session' in outcome) {
      this.result.next(outcome.session);
      this.result.complete();
    } else {
      this.result.error(outcome.error);
    }
  }
}

/** How an initial connection attempt ended. */
export type ConnectionAttemptOutcome = 'success' | 'failure' | 'cancelled';

export interface ConnectionAttemptReport {
  readonly outcome: ConnectionAttemptOutcome;
  /** From the attempt's start (including the registry lookup) to its outcome. */
  readonly elapsedMs: number;
  readonly error?: unknown;
}

/**
 * Reports an initial attempt (no installed session, no refresh-supplied bundle) to `reports`,
 * once, with the time from its start to its outcome; other attempts pass through unreported.
 */
export function reportInitialAttempt<T>(
  attempt: ConnectionAttempt,
  sessionInstalled: boolean,
  reports: { next(report: ConnectionAttemptReport): void },
  now: () => number,
  closed: () => boolean,
  source: Observable<T>,
): Observable<T> {
  if (sessionInstalled || attempt.prefetchedBundle !== undefined) return source;
  return defer(() => {
    const startedAt = now();
    let reported = false;
    const report = (outcome: ConnectionAttemptOutcome, error?: unknown) => {
      if (reported) return;
      reported = true;
      reports.next({
        outcome,
        elapsedMs: now() - startedAt,
        ...(error === undefined ? {} : { error }),
      });
    };
    return source.pipe(
      tap({
        next: () => report('success'),
        error: (error: unknown) =>
          report(attempt.cancelled || closed() ? 'cancelled' : 'failure', error),
        unsubscribe: () => report('cancelled'),
      }),
    );
  });
}
