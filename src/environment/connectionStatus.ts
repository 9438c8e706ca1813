/**
 * `status$` of a lazy client (`LazyRemoteExecServerClient.status$`): what a user interface
 * shows about an environment's connection, as one discriminated union it can render directly.
 * `connectionState$` stays the seed's two values; this is the detail beside it. Guarded by
 * spec/environment/connectionStatus.spec.ts (marble tests).
 */
import { BehaviorSubject, type Observable, type Subscription } from 'rxjs';
import type { ManagedSession } from './managedSession.js';

/** Where a recovery stands: which try, and when the next one starts while it waits. */
export interface RecoveryProgress {
  /** The resume try in flight or next to start, from 1. */
  readonly attempt: number;
  /** Scheduler time (ms) at which the next try starts; undefined while a try is in flight. */
  readonly nextRetryAt: number | undefined;
  /** `nextRetryAt` as a delay from when this status was published. */
  readonly nextRetryInMs: number | undefined;
}

/** What a lazy client's connection is doing; `ConnectionStatus` adds the last error. */
export type ConnectionStatusKind =
  /** No session and nothing in flight: the next use connects (first use, or after a failure). */
  | { readonly kind: 'disconnected' }
  /** A connection attempt is in flight (registry lookup, handshake). */
  | { readonly kind: 'connecting' }
  /** A live session. */
  | { readonly kind: 'connected' }
  /** The transport was lost; the session is being resumed (spec §14). */
  | ({ readonly kind: 'recovering' } & RecoveryProgress)
  /** `refreshConnection()` is looking up the executor, replacing the session or probing it. */
  | { readonly kind: 'refreshing' }
  /** The session was replaced by another executor session and nothing new is connecting. */
  | { readonly kind: 'retired' }
  /** `close()` was called. Final. */
  | { readonly kind: 'closed' };

/** The connection status, with the last error seen (kept across later successes). */
export type ConnectionStatus = ConnectionStatusKind & {
  /** The most recent failure: attempt, transport loss, recovery try or refresh. */
  readonly lastError: Error | undefined;
};

/** True when `a` and `b` would render the same. */
function sameStatus(a: ConnectionStatus, b: ConnectionStatus): boolean {
  if (a.kind !== b.kind || a.lastError !== b.lastError) return false;
  if (a.kind === 'recovering' && b.kind === 'recovering') {
    return a.attempt === b.attempt && a.nextRetryAt === b.nextRetryAt;
  }
  return true;
}

/** What the status is derived from, read from the lazy client when something changed. */
export interface StatusFacts {
  readonly closed: boolean;
  readonly refreshing: boolean;
  /** A connection attempt (startup or reconnect) is in flight. */
  readonly connecting: boolean;
  /** The installed session, if any. */
  readonly session: ManagedSession | undefined;
}

const FIRST_TRY: RecoveryProgress = {
  attempt: 1,
  nextRetryAt: undefined,
  nextRetryInMs: undefined,
};

/** The status the facts say (precedence: closed, refreshing, the session, an attempt). */
function statusKindOf(facts: StatusFacts): ConnectionStatusKind {
  if (facts.closed) return { kind: 'closed' };
  if (facts.refreshing) return { kind: 'refreshing' };
  const session = facts.session;
  if (session !== undefined) {
    const state = session.client.state;
    if (state === 'connected') return { kind: 'connected' };
    if (state === 'recovering')
      return { kind: 'recovering', ...(session.recoveryProgress ?? FIRST_TRY) };
    if (facts.connecting) return { kind: 'connecting' };
    return state === 'retired' ? { kind: 'retired' } : { kind: 'disconnected' };
  }
  return facts.connecting ? { kind: 'connecting' } : { kind: 'disconnected' };
}

/** Publishes `status$`: re-derived on every change it is told of, emitted only when it differs. */
export class StatusPublisher {
  private readonly subject = new BehaviorSubject<ConnectionStatus>({
    kind: 'disconnected',
    lastError: undefined,
  });
  private lastError: Error | undefined;
  /** Follows the installed session's state, losses and recovery. */
  private sessionWatch: Subscription | undefined;

  constructor(private readonly facts: () => StatusFacts) {}

  get status$(): Observable<ConnectionStatus> {
    return this.subject.asObservable();
  }

  /** Follows `session` (the newly installed one) instead of the previous. */
  watch(session: ManagedSession): void {
    this.sessionWatch?.unsubscribe();
    const watch = session.client.disconnected$.subscribe((error) => this.noteError(error));
    watch.add(
      session.client.state$.subscribe((state) => {
        if (state === 'failed') this.noteError(session.client.failure);
        this.publish();
      }),
    );
    watch.add(
      session.recoveryProgress$.subscribe((report) => {
        if (report?.error !== undefined) this.noteError(report.error);
        this.publish();
      }),
    );
    this.sessionWatch = watch;
  }

  /** Remembers `error` as the last error (published with the next status). */
  noteError(error: unknown): void {
    if (error instanceof Error) this.lastError = error;
  }

  publish(): void {
    if (this.subject.closed) return;
    const next = { ...statusKindOf(this.facts()), lastError: this.lastError } as ConnectionStatus;
    if (!sameStatus(this.subject.value, next)) this.subject.next(next);
  }

  /** Publishes the final status (`closed`) and completes. */
  close(): void {
    this.sessionWatch?.unsubscribe();
    this.publish();
    this.subject.complete();
  }
}
