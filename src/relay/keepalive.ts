/**
 * WebSocket keepalive with a Pong watchdog (noise-relay.md §5.6, protocol.md §12.4), on rxjs
 * schedulers only so marble tests control time.
 *
 * Rules (codex `websocket_pong_watchdog.rs`): a tick every `intervalMs` (first one
 * `intervalMs` after subscribing) sends a Ping only when none is outstanding, so repeated
 * ticks never extend the deadline; the deadline is `pongTimeoutMs` after that Ping; any Pong
 * clears it; other traffic does not count as liveness.
 */
import {
  Observable,
  type SchedulerLike,
  Subscription,
  asyncScheduler,
  interval,
  timer,
} from 'rxjs';
import { DisconnectReason, DisconnectedError } from '../protocol/errors.js';

/** `WEBSOCKET_KEEPALIVE_INTERVAL`. */
export const WEBSOCKET_KEEPALIVE_INTERVAL_MS = 30_000;
/** `WEBSOCKET_PONG_TIMEOUT`. */
export const WEBSOCKET_PONG_TIMEOUT_MS = 60_000;
/** `WEBSOCKET_PONG_TIMEOUT_REASON`: the disconnect reason codex reports. */
export const WEBSOCKET_PONG_TIMEOUT_REASON = 'pong_timeout';

export interface KeepaliveOptions {
  readonly intervalMs?: number;
  readonly pongTimeoutMs?: number;
  readonly scheduler?: SchedulerLike;
}

/**
 * The peer stopped answering Pings: the connection is dead. A `DisconnectedError`, so the
 * client treats it as a transport loss and recovers on a fresh connection.
 */
export class PongTimeoutError extends DisconnectedError {
  readonly reason = WEBSOCKET_PONG_TIMEOUT_REASON;
  constructor(readonly pongTimeoutMs: number) {
    super(`${DisconnectReason.transportDisconnected}: ${WEBSOCKET_PONG_TIMEOUT_REASON}`);
  }
}

/** One emission = send one WebSocket Ping now; `n` counts Pings from 0. */
export interface KeepalivePing {
  readonly n: number;
}

/**
 * Emits whenever a Ping must be sent and errors with `PongTimeoutError` when a Ping goes
 * unanswered for `pongTimeoutMs`. `pongs` emits on every Pong received; when it completes
 * (the socket is gone) keepalive completes; its errors pass through. Unsubscribe to stop.
 */
export function keepalive(
  pongs: Observable<unknown>,
  options: KeepaliveOptions = {},
): Observable<KeepalivePing> {
  const intervalMs = options.intervalMs ?? WEBSOCKET_KEEPALIVE_INTERVAL_MS;
  const pongTimeoutMs = options.pongTimeoutMs ?? WEBSOCKET_PONG_TIMEOUT_MS;
  const scheduler = options.scheduler ?? asyncScheduler;
  if (!(intervalMs > 0) || !(pongTimeoutMs > 0)) {
    throw new RangeError('keepalive intervalMs and pongTimeoutMs must be positive');
  }
  return new Observable<KeepalivePing>((subscriber) => {
    const subscription = new Subscription();
    let deadline: Subscription | undefined;
    let sent = 0;
    const clearDeadline = (): void => {
      deadline?.unsubscribe();
      deadline = undefined;
    };
    subscription.add(clearDeadline);
    subscription.add(
      pongs.subscribe({
        next: clearDeadline,
        error: (error: unknown) => subscriber.error(error),
        complete: () => subscriber.complete(),
      }),
    );
    subscription.add(
      interval(intervalMs, scheduler).subscribe(() => {
        if (deadline) return;
        deadline = timer(pongTimeoutMs, scheduler).subscribe(() =>
          subscriber.error(new PongTimeoutError(pongTimeoutMs)),
        );
        subscriber.next({ n: sent++ });
      }),
    );
    return subscription;
  });
}
