/**
 * `registry_recovery_retry_delay` (spec/protocol.md §14.2): exponential backoff 0.5 s, 1 s,
 * 2 s, 4 s, then 5 s, plus a jitter in [0, base/2] derived from (key, attempt) so one session's
 * retries are reproducible while different sessions spread out.
 */
import { platform, platformCrypto } from '../platform/index.js';
import {
  REGISTRY_RECOVERY_INITIAL_RETRY_INTERVAL_MS,
  REGISTRY_RECOVERY_MAX_RETRY_INTERVAL_MS,
} from './constants.js';

/** The backoff before jitter for the `attempt`-th retry (0-based). */
export function registryRetryBaseDelayMs(attempt: number): number {
  const doublings = Math.min(Math.max(attempt, 0), 4);
  return Math.min(
    REGISTRY_RECOVERY_INITIAL_RETRY_INTERVAL_MS * 2 ** doublings,
    REGISTRY_RECOVERY_MAX_RETRY_INTERVAL_MS,
  );
}

/** Base delay plus a deterministic jitter in `[0, base/2]` ms. */
export function registryRecoveryRetryDelayMs(key: string, attempt: number): number {
  const base = registryRetryBaseDelayMs(attempt);
  const digest = platformCrypto.sha256(platform.utf8Encode(`${key}:${attempt}`));
  const jitter =
    new DataView(digest.buffer, digest.byteOffset).getUint32(0) % (Math.floor(base / 2) + 1);
  return base + jitter;
}
