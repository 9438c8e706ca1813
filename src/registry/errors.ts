/**
 * Errors of the environment registry client (noise-relay.md §6.1, protocol.md §17.1). Display
 * texts follow codex's `EnvironmentRegistry*` variants. Registry answers that break the
 * contract (another environment id, unknown security profile, incomplete bundle) are plain
 * `ProtocolError`s and are not retryable.
 */
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

/** IANA reason phrases (as Node's `http.STATUS_CODES`; spec/registry checks they agree). */
export const STATUS_CODES: Readonly<Record<number, string>> = {
  100: 'Continue',
  101: 'Switching Protocols',
  102: 'Processing',
  103: 'Early Hints',
  200: 'OK',
  201: 'Created',
  202: 'Accepted',
  203: 'Non-Authoritative Information',
  204: 'No Content',
  205: 'Reset Content',
  206: 'Partial Content',
  207: 'Multi-Status',
  208: 'Already Reported',
  226: 'IM Used',
  300: 'Multiple Choices',
  301: 'Moved Permanently',
  302: 'Found',
  303: 'See Other',
  304: 'Not Modified',
  305: 'Use Proxy',
  307: 'Temporary Redirect',
  308: 'Permanent Redirect',
  400: 'Bad Request',
  401: 'Unauthorized',
  402: 'Payment Required',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  406: 'Not Acceptable',
  407: 'Proxy Authentication Required',
  408: 'Request Timeout',
  409: 'Conflict',
  410: 'Gone',
  411: 'Length Required',
  412: 'Precondition Failed',
  413: 'Payload Too Large',
  414: 'URI Too Long',
  415: 'Unsupported Media Type',
  416: 'Range Not Satisfiable',
  417: 'Expectation Failed',
  418: "I'm a Teapot",
  421: 'Misdirected Request',
  422: 'Unprocessable Entity',
  423: 'Locked',
  424: 'Failed Dependency',
  425: 'Too Early',
  426: 'Upgrade Required',
  428: 'Precondition Required',
  429: 'Too Many Requests',
  431: 'Request Header Fields Too Large',
  451: 'Unavailable For Legal Reasons',
  500: 'Internal Server Error',
  501: 'Not Implemented',
  502: 'Bad Gateway',
  503: 'Service Unavailable',
  504: 'Gateway Timeout',
  505: 'HTTP Version Not Supported',
  506: 'Variant Also Negotiates',
  507: 'Insufficient Storage',
  508: 'Loop Detected',
  509: 'Bandwidth Limit Exceeded',
  510: 'Not Extended',
  511: 'Network Authentication Required',
};

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
