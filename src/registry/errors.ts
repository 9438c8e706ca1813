/**
 * Errors of the environment registry client (noise-relay.md §6.1, protocol.md §17.1). Display
 * texts follow codex's `EnvironmentRegistry*` variants. Registry answers that break the
 * contract (another environment id, unknown security profile, incomplete bundle) are plain
 * `ProtocolError`s and are not retryable.
 */
import { STATUS_CODES } from 'node:http';
import { ExecServerError, JsonError } from '../protocol/errors.js';

/** The registry client is misconfigured (base URL, environment id, bearer token). Fix the setup. */
export class EnvironmentRegistryConfigError extends ExecServerError {
  constructor(readonly detail: string) {
    super(`environment registry configuration error: ${detail}`);
  }
}

/** The registry refused our credentials (401/403). Retrying with the same token will not help. */
export class EnvironmentRegistryAuthError extends ExecServerError {
  constructor(
    readonly status: number,
    readonly detail: string,
  ) {
    super(`environment registry authentication error: ${detail}`);
  }
}

/** The registry answered with another non-2xx status; `code` comes from `{"error":{"code"}}`. */
export class EnvironmentRegistryHttpError extends ExecServerError {
  constructor(
    readonly status: number,
    readonly code: string | undefined,
    readonly registryMessage: string,
  ) {
    super(
      `environment registry request failed (${statusText(status)}${code === undefined ? '' : `, ${code}`}): ${registryMessage}`,
    );
  }
}

/** Which step of a registry request failed without an HTTP answer we could use. */
export type RegistryRequestFailure = 'connect' | 'timeout' | 'body';

/**
 * The request never produced a usable answer: the connection failed, it timed out, or the
 * body broke off (or was too large). All of these are retryable.
 */
export class EnvironmentRegistryRequestError extends ExecServerError {
  constructor(
    readonly failure: RegistryRequestFailure,
    readonly detail: string,
    options?: { cause?: unknown },
  ) {
    super(`environment registry request failed: ${detail}`, options);
  }
}

/** `503 Service Unavailable`, like Rust's `StatusCode` display. */
export function statusText(status: number): string {
  const reason = STATUS_CODES[status];
  return reason === undefined ? String(status) : `${status} ${reason}`;
}

/**
 * A 2xx registry body did not decode into the expected JSON. Displays like codex 0.169.0
 * ("failed to serialize or deserialize exec-server JSON: …"); retryable like the other
 * registry request failures (protocol.md §17.2).
 */
export class EnvironmentRegistryDecodeError extends JsonError {}
