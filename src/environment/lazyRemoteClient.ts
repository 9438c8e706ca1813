/**
 * `LazyRemoteExecServerClient` (spec/protocol.md §13–§16): the per-environment owner of the
 * exec-server session. Connects on first use (concurrent callers share one attempt), resumes
 * the session after transport loss, replaces it on `refreshConnection()`, and publishes
 * whether a live session is installed.
 */
import {
  BehaviorSubject,
  asyncScheduler,
  tap,
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
import type { ExecServerClient } from '../client/execServerClient.js';
import { DisconnectedError, DisconnectReason, ProtocolError } from '../protocol/errors.js';
import { EnvironmentRegistryRequestError } from '../registry/index.js';
import { formatDuration } from '../transport/formatDuration.js';
import { ConnectionAttempt } from './connectionAttempt.js';
import { CONNECT_TIMEOUT_MS } from './constants.js';
import {
  ConnectionAttemptError,
  ProvisioningFailedError,
  isRetryableRecoveryError,
} from './errors.js';
import { ManagedSession, type EnvironmentConnectionState } from './managedSession.js';
import { bundleExecutorKey, connectSession } from './sessionConnector.js';
import {
  noiseParamsOf,
  type ExecServerTransportParams,
  type ProvisioningReadiness,
} from './transportParams.js';

/** Outcome of the environment's readiness: ready, or the error that keeps it unavailable. */
export type ReadinessResult =
  { readonly ready: true } | { readonly ready: false; readonly error: Error };

export interface LazyRemoteClientOptions {
  /** Scheduler for every deadline and backoff (tests pass a TestScheduler). */
  readonly scheduler?: SchedulerLike;
  /** Recovery deadline after a transport loss, default 25 s. */
  readonly recoveryTimeoutMs?: number;
  /** Bound of the refresh registry lookup, default 10 s. */
  readonly refreshLookupTimeoutMs?: number;
}

/** How an initial connection attempt ended. */
export type ConnectionAttemptOutcome = 'success' | 'failure' | 'cancelled';

export interface ConnectionAttemptReport {
  readonly outcome: ConnectionAttemptOutcome;
  /** From the attempt's start (including the registry lookup) to its outcome. */
  readonly elapsedMs: number;
  readonly error?: unknown;
}

interface RefreshOutcome {
  readonly ticket: number;
  readonly error?: unknown;
}

export class LazyRemoteExecServerClient {
  private readonly state = new BehaviorSubject<EnvironmentConnectionState>('Disconnected');
  private current: ManagedSession | undefined;
  private readonly startup = new ConnectionAttempt();
  private reconnectAttempt: ConnectionAttempt | undefined;
  private readonly refreshRequests = new Subject<number>();
  private readonly refreshOutcomes = new Subject<RefreshOutcome>();
  private readonly refreshes: Subscription;
  private refreshTickets = 0;
  private readonly attempts = new Subject<ConnectionAttemptReport>();
  private closed = false;

  constructor(
    readonly transportParams: ExecServerTransportParams,
    private readonly options: LazyRemoteClientOptions = {},
  ) {
    // Refresh is a switchMap over requests: a newer request abandons the older one's stale
    // lookup, handshake or probe; each caller completes with the first refresh that finishes
    // after its own request (its own, or the one that superseded it).
    this.refreshes = this.refreshRequests
      .pipe(
        switchMap((ticket) =>
          this.refreshOnce().pipe(
            map((): RefreshOutcome => ({ ticket })),
            catchError((error: unknown) => of<RefreshOutcome>({ ticket, error })),
          ),
        ),
      )
      .subscribe((outcome) => this.refreshOutcomes.next(outcome));
  }

  /** `Connected` while an installed session has a live transport; replays the current value. */
  get connectionState$(): Observable<EnvironmentConnectionState> {
    return this.state.asObservable();
  }

  /**
   * One report per initial connection attempt (no session installed yet, not from a
   * refresh): `success`, `failure` (with the error) or `cancelled` (superseded or closed).
   */
  get connectionAttempts$(): Observable<ConnectionAttemptReport> {
    return this.attempts.asObservable();
  }

  /** The current connection state. */
  get connectionState(): EnvironmentConnectionState {
    return this.state.value;
  }

  /** The registration id of the installed session's executor (Noise only). */
  get executorRegistrationId(): string | undefined {
    return this.current?.registrationId;
  }

  /** True once a session was installed or the first connection attempt settled. */
  get startupFinished(): boolean {
    return this.current !== undefined || this.startup.outcome !== undefined;
  }

  /**
   * Ready (a live session), the error keeping the environment unavailable, or undefined while
   * that is not known yet (connecting or recovering).
   */
  get readinessResult(): ReadinessResult | undefined {
    if (this.current) return readinessOf(this.current.client);
    const outcome = this.startup.outcome;
    if (outcome === undefined) return undefined;
    return 'session' in outcome
      ? readinessOf(outcome.session.client)
      : { ready: false, error: outcome.error };
  }

  /**
   * The session client, connecting on first use. Concurrent callers share one attempt. A
   * recovering session is returned as is (its calls wait). A failed or retired one is
   * replaced by a new connection; a failed first attempt is retried when its error is
   * retryable and remembered otherwise (ConnectionAttemptError).
   */
  get(): Observable<ExecServerClient> {
    return defer(() => {
      if (this.closed) return throwError(() => closedError());
      const current = this.current;
      if (current && !current.isFailed) return of(current.client);
      if (current) return this.reconnect();
      return this.initialClient().pipe(
        switchMap((client) => (isTerminal(client) ? this.reconnect() : of(client))),
      );
    });
  }

  /**
   * The session client only if it is live right now; never connects, waits or recovers.
   * Errors: "exec-server environment is not ready" before startup, "…is recovering", the
   * session's failure, or the startup ConnectionAttemptError.
   */
  getFailFast(): Observable<ExecServerClient> {
    return defer(() => {
      const outcome = this.startup.outcome;
      let client = this.current?.client;
      if (client === undefined && outcome !== undefined) {
        if ('error' in outcome) return throwError(() => outcome.error);
        client = outcome.session.client;
      }
      if (client === undefined) {
        return throwError(() => new DisconnectedError(DisconnectReason.notReady));
      }
      const live = client;
      if (live.state === 'connected') return of(live);
      if (live.state === 'recovering') {
        return throwError(() => new DisconnectedError(DisconnectReason.recovering));
      }
      return throwError(
        () => live.failure ?? new DisconnectedError(DisconnectReason.transportDisconnected),
      );
    });
  }

  /** Waits for the first connection (the startup attempt), without the client. */
  waitUntilReady(): Observable<void> {
    return defer(() => (this.closed ? throwError(() => closedError()) : this.initialClient())).pipe(
      map(() => undefined),
    );
  }

  /**
   * Planned executor replacement (spec §15): a fresh registry lookup, then keep the session
   * (not failed and the same executor key, even under a renewed registration id) or retire it
   * and connect to the executor the registry names, then a live `environment/status` probe
   * that never waits for recovery. A failed lookup changes nothing. Completes when a refresh
   * issued at or after this call has finished; errors with its error. A newer refresh
   * supersedes this one's stale lookup or handshake, and this caller then completes with the
   * newer one. Unsubscribing stops waiting but does not cancel the refresh.
   */
  refreshConnection(): Observable<void> {
    return new Observable<void>((subscriber) => {
      if (this.closed) {
        subscriber.error(closedError());
        return undefined;
      }
      const ticket = ++this.refreshTickets;
      const subscription = this.refreshOutcomes
        .pipe(
          filter((outcome) => outcome.ticket >= ticket),
          take(1),
        )
        .subscribe((outcome) => {
          if (outcome.error === undefined) subscriber.complete();
          else subscriber.error(outcome.error);
        });
      this.refreshRequests.next(ticket);
      return subscription;
    });
  }

  /** Ends everything: attempts are cancelled, the session is closed, state completes. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    // Callers still waiting for a refresh learn that it will not happen.
    this.refreshOutcomes.next({ ticket: Number.POSITIVE_INFINITY, error: closedError() });
    this.refreshes.unsubscribe();
    this.startup.cancel();
    this.reconnectAttempt?.cancel();
    this.current?.detach();
    this.current?.retire();
    this.state.next('Disconnected');
    this.state.complete();
    this.attempts.complete();
  }

  // ---------------------------------------------------------------------------------------

  private initialClient(): Observable<ExecServerClient> {
    return defer(() => {
      const outcome = this.startup.outcome;
      if (
        this.startup.cancelled ||
        (outcome !== undefined && 'error' in outcome && this.canRetry(outcome.error))
      ) {
        return this.reconnect();
      }
      return this.connectOnce(this.startup);
    });
  }

  /** A failed startup is retried (not remembered) when its error is retryable. */
  private canRetry(error: ConnectionAttemptError): boolean {
    if (error.cause instanceof ProvisioningFailedError) {
      // Readiness may have arrived after the attempt published its failure.
      return peekReadiness(this.transportParams)?.ok === true;
    }
    return isRetryableRecoveryError(error);
  }

  private reconnect(): Observable<ExecServerClient> {
    return defer(() => {
      const current = this.current;
      if (current && !current.isFailed) return of(current.client);
      // Join the attempt in flight; a settled one is never joined again.
      const inFlight = this.reconnectAttempt;
      const attempt =
        inFlight !== undefined && inFlight.outcome === undefined
          ? inFlight
          : this.openReconnectSlot(new ConnectionAttempt());
      return this.connectOnce(attempt);
    });
  }

  /** Puts `attempt` in the shared reconnect slot; it leaves the slot when it settles. */
  private openReconnectSlot(attempt: ConnectionAttempt): ConnectionAttempt {
    this.reconnectAttempt = attempt;
    return attempt;
  }

  private connectOnce(attempt: ConnectionAttempt): Observable<ExecServerClient> {
    const result = attempt.run(() =>
      this.observeAttempt(
        attempt,
        defer(() =>
          connectSession(this.transportParams, {
            ...(this.options.scheduler ? { scheduler: this.options.scheduler } : {}),
            ...(attempt.prefetchedBundle ? { prefetchedBundle: attempt.prefetchedBundle } : {}),
          }),
        ).pipe(
          map((connected) => {
            const session = new ManagedSession(connected, {
              ...(this.options.recoveryTimeoutMs === undefined
                ? {}
                : { recoveryTimeoutMs: this.options.recoveryTimeoutMs }),
              ...(this.options.scheduler ? { scheduler: this.options.scheduler } : {}),
            });
            if (attempt.cancelled || this.closed) {
              // Lost the race with a refresh: never install, never leave it running.
              session.retire();
              throw new DisconnectedError(DisconnectReason.superseded);
            }
            this.install(session);
            return session;
          }),
        ),
      ),
    );
    return result.pipe(
      catchError((error: unknown) => {
        if (this.reconnectAttempt === attempt) this.reconnectAttempt = undefined;
        return throwError(() => error);
      }),
      map((session) => {
        if (this.reconnectAttempt === attempt) this.reconnectAttempt = undefined;
        return session.client;
      }),
    );
  }

  /**
   * Reports initial attempts (no installed session, no refresh-supplied bundle) on
   * `connectionAttempts$`, with the time from the attempt's start to its outcome.
   */
  private observeAttempt(
    attempt: ConnectionAttempt,
    source: Observable<ManagedSession>,
  ): Observable<ManagedSession> {
    if (this.current !== undefined || attempt.prefetchedBundle !== undefined) return source;
    return defer(() => {
      const now = () => (this.options.scheduler ?? asyncScheduler).now();
      const startedAt = now();
      let reported = false;
      const report = (outcome: ConnectionAttemptOutcome, error?: unknown) => {
        if (reported) return;
        reported = true;
        this.attempts.next({
          outcome,
          elapsedMs: now() - startedAt,
          ...(error === undefined ? {} : { error }),
        });
      };
      return source.pipe(
        tap({
          next: () => report('success'),
          error: (error: unknown) =>
            report(attempt.cancelled || this.closed ? 'cancelled' : 'failure', error),
          unsubscribe: () => report('cancelled'),
        }),
      );
    });
  }

  private install(session: ManagedSession): void {
    const previous = this.current;
    if (previous !== undefined && previous !== session) {
      previous.detach();
      if (!previous.isFailed) previous.retire();
    }
    this.current = session;
    session.attach(this.state);
  }

  private refreshOnce(): Observable<void> {
    return defer(() => {
      const noise = noiseParamsOf(this.transportParams);
      if (noise === undefined) {
        return throwError(() => new ProtocolError('connection refresh requires a Noise registry'));
      }
      const observed = this.current;
      const observedRegistration = observed?.registrationId;
      const lookupTimeoutMs = this.options.refreshLookupTimeoutMs ?? CONNECT_TIMEOUT_MS;
      return defer(() => noise.provider.connectBundle(noise.identity.publicKey().toJSON())).pipe(
        take(1),
        throwIfEmpty(() => new ProtocolError('registry lookup returned no connect bundle')),
        timeout({
          first: lookupTimeoutMs,
          ...(this.options.scheduler ? { scheduler: this.options.scheduler } : {}),
          with: () =>
            throwError(
              () =>
                new EnvironmentRegistryRequestError(
                  'timeout',
                  `registry lookup timed out after ${formatDuration(lookupTimeoutMs)}`,
                ),
            ),
        }),
        switchMap((bundle) => {
          const current = this.current;
          // Stale lookup: the session changed (or renewed its registration) meanwhile.
          if (current !== observed || current?.registrationId !== observedRegistration) {
            return this.refreshOnce();
          }
          const executorKey = bundleExecutorKey(bundle);
          if (current && !current.isFailed && current.strategy.executorKey?.equals(executorKey)) {
            // Same executor (a renewed registration id is fine): keep the session.
            current.registrationId = bundle.executorRegistrationId;
            return probe(current.client);
          }
          // Replace: claim retirement first, supersede every attempt, then connect anew.
          current?.detach();
          this.startup.cancel();
          this.reconnectAttempt?.cancel();
          this.state.next('Disconnected');
          const attempt = this.openReconnectSlot(new ConnectionAttempt(bundle));
          current?.retire();
          return this.connectOnce(attempt).pipe(switchMap((client) => probe(client)));
        }),
      );
    });
  }
}

/** The live `environment/status` round trip that decides a refresh. */
function probe(client: ExecServerClient): Observable<void> {
  return client.environmentStatus().pipe(map((): void => undefined));
}

function closedError(): DisconnectedError {
  return new DisconnectedError('exec-server environment client was closed');
}

function isTerminal(client: ExecServerClient): boolean {
  return client.state === 'failed' || client.state === 'retired';
}

function readinessOf(client: ExecServerClient): ReadinessResult | undefined {
  switch (client.state) {
    case 'connected':
      return { ready: true };
    case 'recovering':
      return undefined;
    default:
      return {
        ready: false,
        error: client.failure ?? new DisconnectedError(DisconnectReason.transportDisconnected),
      };
  }
}

/** The provisioning readiness right now, when the params are deferred. */
function peekReadiness(params: ExecServerTransportParams): ProvisioningReadiness | undefined {
  if (params.kind !== 'deferred') return undefined;
  let value: ProvisioningReadiness | undefined;
  params.readiness$.pipe(take(1)).subscribe((readiness) => (value = readiness));
  return value;
}
