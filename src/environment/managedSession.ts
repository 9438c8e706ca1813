/**
 * One session installed (or about to be installed) in a lazy client: the ExecServerClient, the
 * strategy that reopens its transport, the registration it runs under, its recovery task and
 * the link that publishes its state to the environment's connection state.
 */
import { type Subscription, type SchedulerLike, type Subject, map } from 'rxjs';
import type { ExecServerClient } from '../client/execServerClient.js';
import { DisconnectReason } from '../protocol/errors.js';
import { recoverSession } from './sessionRecovery.js';
import type { ConnectedSession, ReconnectStrategy } from './sessionConnector.js';

/** Whether the environment has a live session. */
export type EnvironmentConnectionState = 'Connected' | 'Disconnected';

export interface ManagedSessionOptions {
  readonly recoveryTimeoutMs?: number;
  readonly scheduler?: SchedulerLike;
}

export class ManagedSession {
  readonly client: ExecServerClient;
  readonly strategy: ReconnectStrategy;
  /** The executor registration the session runs under; renewed by recovery or a refresh. */
  registrationId: string | undefined;

  private publisher: Subscription | undefined;
  private recovery: Subscription | undefined;
  private lastDisconnect: string = DisconnectReason.transportDisconnected;
  private readonly watchers: Subscription;

  constructor(connected: ConnectedSession, options: ManagedSessionOptions = {}) {
    this.client = connected.client;
    this.strategy = connected.strategy;
    this.registrationId = connected.registrationId;
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
  }

  private startRecovery(options: ManagedSessionOptions): void {
    if (this.recovery !== undefined) return;
    const subscription = recoverSession(this.client, this.strategy, this.lastDisconnect, {
      ...(options.recoveryTimeoutMs === undefined ? {} : { deadlineMs: options.recoveryTimeoutMs }),
      ...(options.scheduler ? { scheduler: options.scheduler } : {}),
      onResumed: (registrationId) => {
        if (registrationId !== undefined) this.registrationId = registrationId;
      },
    }).subscribe({ complete: () => (this.recovery = undefined) });
    if (!subscription.closed) this.recovery = subscription;
  }

  private stopRecovery(): void {
    this.recovery?.unsubscribe();
    this.recovery = undefined;
  }
}
