/** Timers and limits of the per-environment connection owner (spec/protocol.md §18.1). */

/** WebSocket open deadline, and the bound of the refresh registry lookup. */
export const CONNECT_TIMEOUT_MS = 10_000;
/** `initialize` + `initialized` (and the Noise handshake wait). */
export const INITIALIZE_TIMEOUT_MS = 10_000;
/** The whole recovery of one lost transport; kept inside the executor's 30 s retention window. */
export const SESSION_RECOVERY_TIMEOUT_MS = 25_000;
/** Retry spacing of recovery over plain WebSocket. */
export const SESSION_RECOVERY_RETRY_INTERVAL_MS = 100;
/** Registry backoff: first delay… */
export const REGISTRY_RECOVERY_INITIAL_RETRY_INTERVAL_MS = 500;
/** …and its cap (plus up to 50 % jitter). */
export const REGISTRY_RECOVERY_MAX_RETRY_INTERVAL_MS = 5_000;
/** Initial Noise connect: retries of a retryable registry error. */
export const INITIAL_REGISTRY_MAX_RETRIES = 4;
/** Initial Noise connect: bound of each registry lookup. */
export const INITIAL_REGISTRY_REQUEST_TIMEOUT_MS = 6_000;
/** Initial Noise connect: bound of all lookups together. */
export const INITIAL_REGISTRY_OPERATION_TIMEOUT_MS = 14_000;
/** A provisioned environment retries `environment_offline` this long after it became ready. */
export const PROVISIONED_ENVIRONMENT_CONNECT_TIMEOUT_MS = 5 * 60_000;
/** `clientName` sent by environment sessions. */
export const ENVIRONMENT_CLIENT_NAME = 'codex-environment';
