import {
  EnvironmentRegistryDecodeError,
  EnvironmentRegistryHttpError,
  EnvironmentRegistryRequestError,
} from './errors.js';

/** Registry error code of a 409 that means "the executor is not connected yet; try again". */
export const ENVIRONMENT_OFFLINE_ERROR_CODE = 'environment_offline';

/** A 409 `environment_offline`: the executor has not (re)registered yet. */
export function isEnvironmentOfflineError(error: unknown): boolean {
  return (
    error instanceof EnvironmentRegistryHttpError &&
    error.status === 409 &&
    error.code === ENVIRONMENT_OFFLINE_ERROR_CODE
  );
}

/**
 * codex's `is_retryable_registry_error`: connect, timeout, body and decode failures; HTTP 5xx,
 * 408 and 429; and 409 `environment_offline`. Auth errors, other 4xx (including other 409s
 * such as `registration_conflict`), config errors and protocol errors are fatal.
 */
export function isRetryableRegistryError(error: unknown): boolean {
  if (error instanceof EnvironmentRegistryRequestError) return true;
  if (error instanceof EnvironmentRegistryDecodeError) return true;
  if (!(error instanceof EnvironmentRegistryHttpError)) return false;
  const { status } = error;
  return status >= 500 || status === 408 || status === 429 || isEnvironmentOfflineError(error);
}
