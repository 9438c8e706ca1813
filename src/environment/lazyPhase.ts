/**
 * The lifecycle of a lazy client (`LazyRemoteExecServerClient`), as one union. Changed only by
 * its `toPhase`; guarded by the seed twins (spec/environment/clientRefresh.spec.ts) and the
 * marble tests (lifecycleTiming.spec.ts, connectionStatus.spec.ts).
 */
import type { ConnectionAttempt } from './connectionAttempt.js';
import type { ManagedSession } from './managedSession.js';

/**
 * - `starting`: no session installed yet (the startup attempt may be idle, running or failed).
 * - `installed`: a session was installed (it may be connected, recovering, retired or failed:
 *   its own state); a failed or retired one is replaced by the next `get()` or a refresh.
 * - `closed`: `close()` was called; final. Keeps the last session for the read-only getters.
 * `reconnect` is the shared reconnect attempt slot: callers join the attempt in it while it
 * runs; it is emptied when that attempt settles.
 */
export type LazyPhase =
  | { readonly kind: 'starting'; readonly reconnect: ConnectionAttempt | undefined }
  | {
      readonly kind: 'installed';
      readonly session: ManagedSession;
      readonly reconnect: ConnectionAttempt | undefined;
    }
  | { readonly kind: 'closed'; readonly session: ManagedSession | undefined };
