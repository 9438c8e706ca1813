/**
 * `status$` of a lazy client (`LazyRemoteExecServerClient.status$`): what a user interface
 * shows about an environment's connection, as one discriminated union it can render directly.
 * `connectionState$` stays the seed's two values; this is the detail beside it. Guarded by
 * spec/environment/connectionStatus.spec.ts (marble tests).
 */

/** Where a recovery stands: which try, and when the next one starts while it waits. */
export interface RecoveryProgress {
  /** The resume try in flight or next to start, from 1. */
  readonly attempt: number;
  /** Scheduler time (ms) at which the next try starts; undefined while a try is in flight. */
  readonly nextRetryAt: number | undefined;
  /** `nextRetryAt` as a delay from when this status was published. */
  readonly nextRetryInMs: number | undefined;
}

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
export function sameStatus(a: ConnectionStatus, b: ConnectionStatus): boolean {
  if (a.kind !== b.kind || a.lastError !== b.lastError) return false;
  if (a.kind === 'recovering' && b.kind === 'recovering') {
    return a.attempt === b.attempt && a.nextRetryAt === b.nextRetryAt;
  }
  return true;
}
