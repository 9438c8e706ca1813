/** Errors of the per-environment connection layer (spec/protocol.md §17). */
import { DisconnectedError, ExecServerError } from '../protocol/errors.js';
import { isRetryableResumeError } from '../client/execServerClient.js';
import { isRetryableRegistryError } from '../registry/retryable.js';

/**
 * Connecting the environment's session failed. `cause` is the underlying error; every caller
 * that joined the same attempt receives the same instance.
 */
export class ConnectionAttemptError extends ExecServerError {
  constructor(override readonly cause: unknown) {
    super(
      `exec-server connection attempt failed: ${cause instanceof Error ? cause.message : String(cause)}`,
      { cause },
    );
  }
}

/** A provisioned environment reported that provisioning failed. */
export class ProvisioningFailedError extends ExecServerError {
  constructor(readonly detail: string) {
    super(`environment unavailable: ${detail}`);
  }
}

/** A connection attempt that a refresh replaced before it finished. */
export function supersededError(): DisconnectedError {
  return new DisconnectedError('connection attempt was superseded');
}

/**
 * `is_retryable_recovery_error` (spec §17.2): transport loss, connect failure or timeout,
 * initialize timeout, a retryable registry error, or -32010; unwraps ConnectionAttemptError.
 */
export function isRetryableRecoveryError(error: unknown): boolean {
  if (error instanceof ConnectionAttemptError) return isRetryableRecoveryError(error.cause);
  return isRetryableResumeError(error) || isRetryableRegistryError(error);
}

/** The manager already holds `environmentId` with another provisioning mode. */
export class ProvisioningModeConflictError extends ExecServerError {
  constructor(readonly environmentId: string) {
    super(
      `environment \`${environmentId}\` is already registered with a different provisioning mode`,
    );
  }
}
