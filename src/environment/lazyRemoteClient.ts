/**
 * `LazyRemoteExecServerClient` (spec/protocol.md §13–§16): the per-environment owner of the
 * exec-server session. Connects on first use (concurrent callers share one attempt), resumes
 * the session after transport loss, replaces it on `refreshConnection()`, and publishes
 * whether a live session is installed (`connectionState$`) and, for user interfaces, what the
 * connection is doing (`status$`).
 *
 * Its lifecycle is one union (`LazyPhase` below) changed only by `toPhase`; the first
 * connection attempt (`startup`) is kept as the record `readinessResult` and `getFailFast`
 * read, and the refresh requests live in a RefreshQueue.
 */
import {
  BehaviorSubject,
  asyncScheduler,
  Observable,
  Subject,
  catchError,
  defer,
  distinctUntilChanged,
  map,
  of,
  switchMap,
  throwError,
} from 'rxjs';
import type { ExecServerClient } from '../client/execServerClient.js';
import { DisconnectedError, DisconnectReason, ProtocolError } from '../protocol/errors.js';
import type { NoiseRendezvousConnectBundle } from '../registry/index.js';
import {
  ConnectionAttempt,
  reportInitialAttempt,
  type ConnectionAttemptReport,
} from './connectionAttempt.js';
import { StatusPublisher, type ConnectionStatus, type StatusFacts } from './connectionStatus.js';
import { CONNECT_TIMEOUT_MS } from './constants.js';
import {
  ConnectionAttemptError,
  ProvisioningFailedError,
  isRetryableRecoveryError,
} from './errors.js';
import { ManagedSession, type EnvironmentConnectionState } from './managedSession.js';
import { liveClientNow, peekReadiness, readinessFrom, type ReadinessResult } from './readiness.js';
import type { LazyPhase } from './lazyPhase.js';
import { RefreshQueue, lookupRefreshBundle } from './refreshQueue.js';
import { bundleExecutorKey, type ConnectedSession } from './sessionConnector.js';
import { noiseParamsOf, type ExecServerTransportParams } from './transportParams.js';
import {
  closedError,
  connectWith,
  isTerminal,
  NOT_REOPENABLE,
  probe,
} from './lazyClientSupport.js';
import type { LazyRemoteClientOptions } from './lazyClientSupport.js';

export type { ReadinessResult } from './readiness.js';
export type { LazyRemoteClientOptions } from './lazyClientSupport.js';
export type { ConnectionAttemptOutcome, ConnectionAttemptReport } from './connectionAttempt.js';

export class LazyRemoteExecServerClient {
  private phase: LazyPhase = { kind: 'starting', reconnect: undefined };
  private readonly state = new BehaviorSubject<EnvironmentConnectionState>('Disconnected');
  private readonly startup = new ConnectionAttempt(undefined, (attempt) =>
    this.attemptChanged(attempt),
  );
  private readonly refreshes: RefreshQueue;
  private readonly attempts = new Subject<ConnectionAttemptReport>();
  private readonly status = new StatusPublisher(() => this.statusFacts());

  /** @param transportParams how to (re)connect; undefined only for `fromConnected`. */
  constructor(
    readonly transportParams: ExecServerTransportParams | undefined,
    private readonly options: LazyRemoteClientOptions = {},
  ) {
    this.refreshes = new RefreshQueue(
      () => this.refreshOnce(),
      () => this.status.publish(),
    );
  }

  /**
   * Around a session the caller connected (Rust `from_connected`): ready at once, no attempt
   * report; without transport parameters a lost transport fails the session, `get()` then
   * errors, as `refreshConnection()` does (spec/environment/lazyRemoteClient.spec.ts).
   */
  static fromConnected(
    client: ExecServerClient,
    options: LazyRemoteClientOptions = {},
  ): LazyRemoteExecServerClient {
    const lazy = new LazyRemoteExecServerClient(undefined, options);
    const session = lazy.manage({ client, strategy: NOT_REOPENABLE });
    lazy.startup.run(() => of(session));
    lazy.install(session);
    return lazy;
  }

  /**
   * `Connected` while an installed session has a live transport, else `Disconnected`; replays
   * the current value and emits only on change.
   */
  get connectionState$(): Observable<EnvironmentConnectionState> {
    return this.state.pipe(distinctUntilChanged());
  }

  /**
   * What the connection is doing, for a user interface to render: connecting, connected,
   * recovering (try n, time of the next try), refreshing, retired, closed or disconnected,
   * with the last error seen. Replays the current value; emits only on change; completes
   * after `closed`.
   */
  get status$(): Observable<ConnectionStatus> {
    return this.status.status$;
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

  /** The installed session (kept after close), if any. */
  private get current(): ManagedSession | undefined {
    return this.phase.kind === 'starting' ? undefined : this.phase.session;
  }

  private get closed(): boolean {
    return this.phase.kind === 'closed';
  }

  /** The reconnect attempt in the shared slot, if any. */
  private get reconnectAttempt(): ConnectionAttempt | undefined {
    return this.phase.kind === 'closed' ? undefined : this.phase.reconnect;
  }

  /**
   * Ready (a live session), the error keeping the environment unavailable, or undefined while
   * that is not known yet (connecting or recovering).
   */
  get readinessResult(): ReadinessResult | undefined {
    return readinessFrom(this.current, this.startup.outcome);
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
    return defer(() => liveClientNow(this.current, this.startup.outcome));
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
    return defer(() => (this.closed ? throwError(() => closedError()) : this.refreshes.request()));
  }

  /** Ends everything: attempts are cancelled, the session is closed, state completes. */
  close(): void {
    if (this.phase.kind === 'closed') return;
    const reconnect = this.phase.reconnect;
    const session = this.current;
    this.toPhase({ kind: 'closed', session });
    // Callers still waiting for a refresh learn that it will not happen.
    this.refreshes.close(closedError());
    this.startup.cancel();
    reconnect?.cancel();
    session?.detach();
    session?.retire();
    this.state.next('Disconnected');
    this.state.complete();
    this.attempts.complete();
    this.status.close();
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
      return this.transportParams !== undefined && peekReadiness(this.transportParams)?.ok === true;
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
          : this.openReconnectSlot();
      return this.connectOnce(attempt);
    });
  }

  /** Puts a new attempt in the shared reconnect slot; it leaves the slot when it settles. */
  private openReconnectSlot(bundle?: NoiseRendezvousConnectBundle): ConnectionAttempt {
    const attempt = new ConnectionAttempt(bundle, (changed) => this.attemptChanged(changed));
    if (this.phase.kind !== 'closed') this.toPhase({ ...this.phase, reconnect: attempt });
    return attempt;
  }

  /** Empties the reconnect slot if `attempt` is still in it. */
  private leaveReconnectSlot(attempt: ConnectionAttempt): void {
    if (this.phase.kind !== 'closed' && this.phase.reconnect === attempt) {
      this.toPhase({ ...this.phase, reconnect: undefined });
    }
  }

  /** The one place the phase changes. */
  private toPhase(next: LazyPhase): void {
    this.phase = next;
  }

  private connectOnce(attempt: ConnectionAttempt): Observable<ExecServerClient> {
    const result = attempt.run(() =>
      reportInitialAttempt(
        attempt,
        this.current !== undefined,
        this.attempts,
        () => (this.options.scheduler ?? asyncScheduler).now(),
        () => this.closed,
        defer(() =>
          connectWith(this.transportParams, {
            ...this.options.session,
            ...(this.options.scheduler ? { scheduler: this.options.scheduler } : {}),
            ...(attempt.prefetchedBundle ? { prefetchedBundle: attempt.prefetchedBundle } : {}),
          }),
        ).pipe(
          map((connected) => {
            const session = this.manage(connected);
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
        this.leaveReconnectSlot(attempt);
        return throwError(() => error);
      }),
      map((session) => {
        this.leaveReconnectSlot(attempt);
        return session.client;
      }),
    );
  }

  private manage(connected: ConnectedSession): ManagedSession {
    const { recoveryTimeoutMs, scheduler } = this.options;
    return new ManagedSession(connected, {
      ...(recoveryTimeoutMs === undefined ? {} : { recoveryTimeoutMs }),
      ...(scheduler ? { scheduler } : {}),
    });
  }

  private install(session: ManagedSession): void {
    if (this.phase.kind === 'closed') return;
    const previous = this.current;
    if (previous !== undefined && previous !== session) {
      previous.detach();
      if (!previous.isFailed) previous.retire();
    }
    this.toPhase({ kind: 'installed', session, reconnect: this.phase.reconnect });
    session.attach(this.state);
    this.status.watch(session);
  }

  /** A connection attempt started or settled. */
  private attemptChanged(attempt: ConnectionAttempt): void {
    const outcome = attempt.outcome;
    if (outcome !== undefined && 'error' in outcome && !attempt.cancelled) {
      this.status.noteError(outcome.error);
    }
    this.status.publish();
  }

  /** What `status$` is derived from. */
  private statusFacts(): StatusFacts {
    const phase = this.phase;
    return {
      closed: phase.kind === 'closed',
      refreshing: this.refreshes?.busy === true,
      connecting:
        phase.kind !== 'closed' &&
        (phase.reconnect?.inFlight === true ||
          (phase.kind === 'starting' && this.startup.inFlight)),
      session: phase.kind === 'installed' ? phase.session : undefined,
    };
  }

  private refreshOnce(): Observable<void> {
    return defer(() => {
      const noise = this.transportParams && noiseParamsOf(this.transportParams);
      if (noise === undefined) {
        return throwError(() => new ProtocolError('connection refresh requires a Noise registry'));
      }
      const observed = this.current;
      const observedRegistration = observed?.registrationId;
      const lookupTimeoutMs = this.options.refreshLookupTimeoutMs ?? CONNECT_TIMEOUT_MS;
      return lookupRefreshBundle(noise, lookupTimeoutMs, this.options.scheduler).pipe(
        switchMap((bundle) => {
          const current = this.current;
          // Stale lookup: the session changed (or renewed its registration) meanwhile.
          if (current !== observed || current?.registrationId !== observedRegistration) {
            return this.refreshOnce();
          }
          const executorKey = bundleExecutorKey(bundle);
          if (current && !current.isFailed && current.strategy.executorKey?.equals(executorKey)) {
            // Same executor (a renewed registration id is fine): keep the session.
            current.renewRegistration(bundle.executorRegistrationId);
            return probe(current.client);
          }
          // Replace: claim retirement first, supersede every attempt, then connect anew.
          current?.detach();
          this.startup.cancel();
          this.reconnectAttempt?.cancel();
          this.state.next('Disconnected');
          const attempt = this.openReconnectSlot(bundle);
          current?.retire();
          return this.connectOnce(attempt).pipe(switchMap((client) => probe(client)));
        }),
      );
    });
  }
}
