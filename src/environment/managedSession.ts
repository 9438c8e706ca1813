/**
 * One session installed (or about to be installed) in a lazy client: the ExecServerClient, the
 * strategy that reopens its transport, the registration it runs under, its recovery task and
 * the link that publishes its state to the environment's connection state.
 */
import {
  BehaviorSubject,
  type Observable,
  type Subscription,
  type SchedulerLike,
  type Subject,
  asyncScheduler,
  map,
} from 'rxjs';
import type { ExecServerClient } from '../client/execServerClient.js';
import { DisconnectReason } from '../protocol/errors.js';
import type { RecoveryProgress } from './connectionStatus.js';
import { recoverSession } from './sessionRecovery.js';
import type { ConnectedSession, ReconnectStrategy } from './sessionConnector.js';

/** Whether the environment has a live session. */
export type EnvironmentConnectionState = 'Connected' | 'Disconnected';

export interface ManagedSessionOptions {
  readonly recoveryTimeoutMs?: number;
  readonly scheduler?: SchedulerLike;
}

/** A recovery's progress, with why its last try failed. */
export interface RecoveryReport {
  readonly progress: RecoveryProgress;
  readonly error: unknown;
}

export class ManagedSession {
  readonly client: ExecServerClient;
  readonly strategy: ReconnectStrategy;
  /** The executor registration the session runs under; renewed by recovery or a refresh. */
  private registration: string | undefined;

  private publisher: Subscription | undefined;
  private readonly progress = new BehaviorSubject<RecoveryReport | undefined>(undefined);
  private recovery: Subscription | undefined;
  private lastDisconnect: string = DisconnectReason.transportDisconnected;
  private readonly watchers: Subscription;

  constructor(connected: ConnectedSession, options: ManagedSessionOptions = {}) {
    this.client = connected.client;
    this.strategy = connected.strategy;
    this.registration = connected.registrationId;
    this.watchers = this.client.disconnected$.subscribe((error) => {
      this.lastDisconnect = error.message;
    });
    this.watchers.add(
      this.client.state$.subscribe((state) => {
        if (state === 'recovering') this.startRecovery(options);
        else if (state !== 'connected') this.stopRecovery();
      }),
    );
  }

  /** The executor registration the session runs under (Noise only). */
  get registrationId(): string | undefined {
    return this.registration;
  }

  /** A refresh found the same executor under a renewed registration id. */
  renewRegistration(registrationId: string): void {
    this.registration = registrationId;
  }

  /** The running recovery's progress now; undefined while none runs. */
  get recoveryProgress(): RecoveryProgress | undefined {
    return this.progress.value?.progress;
  }

  /** The running recovery's progress; undefined while none runs. */
  get recoveryProgress$(): Observable<RecoveryReport | undefined> {
    return this.progress.asObservable();
  }

  /** Retired or failed: its calls fail; a new session is needed. */
  get isFailed(): boolean {
    const state = this.client.state;
    return state === 'failed' || state === 'retired';
  }

  /** Publishes this session's state (`connected` ⇒ Connected, anything else ⇒ Disconnected). */
  attach(state: Subject<EnvironmentConnectionState>): void {
    this.detach();
    this.publisher = this.client.state$
      .pipe(
        map((s): EnvironmentConnectionState => (s === 'connected' ? 'Connected' : 'Disconnected')),
      )
      .subscribe((value) => state.next(value));
  }

  /** Stops publishing: later transport events of this session can no longer change the state. */
  detach(): void {
    this.publisher?.unsubscribe();
    this.publisher = undefined;
  }

  /**
   * Retirement (spec §16): detach first, abandon recovery, then retire the client (pending
   * calls fail before process handles and body streams do).
   */
  retire(): void {
    this.detach();
    this.stopRecovery();
    this.client.retire();
    this.watchers.unsubscribe();
    this.progress.complete();
  }

  private startRecovery(options: ManagedSessionOptions): void {
    if (this.recovery !== undefined) return;
    const now = () => (options.scheduler ?? asyncScheduler).now();
    this.progress.next({
      progress: { attempt: 1, nextRetryAt: undefined, nextRetryInMs: undefined },
      error: undefined,
    });
    const subscription = recoverSession(this.client, this.strategy, this.lastDisconnect, {
      ...(options.recoveryTimeoutMs === undefined ? {} : { deadlineMs: options.recoveryTimeoutMs }),
      ...(options.scheduler ? { scheduler: options.scheduler } : {}),
      onResumed: (registrationId) => {
        if (registrationId !== undefined) this.registration = registrationId;
      },
      onRetry: ({ attempt, delayMs, error }) => {
        const nextRetryAt = delayMs === undefined ? undefined : now() + delayMs;
        this.progress.next({ progress: { attempt, nextRetryAt, nextRetryInMs: delayMs }, error });
      },
    }).subscribe({ complete: () => this.endRecovery() });
    if (!subscription.closed) this.recovery = subscription;
  }

  private stopRecovery(): void {
    this.recovery?.unsubscribe();
    this.endRecovery();
  }

  private endRecovery(): void {
    this.recovery = undefined;
    if (this.progress.value !== undefined) this.progress.next(undefined);
  }
}
