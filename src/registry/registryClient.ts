/**
 * HTTP client of the environment registry (noise-relay.md §6.1): `/register` and `/validate`
 * for executors, `/connect` for harnesses. Every call is a cold Observable that emits once;
 * unsubscribing aborts the request.
 */
import { platform } from '../platform/index.js';
import { type Observable, type SchedulerLike, defer, map } from 'rxjs';
import type { z } from 'zod';
import type { NoiseChannelPublicKeyJson } from '../noise/index.js';
import { ProtocolError } from '../protocol/errors.js';
import {
  EnvironmentRegistryAuthError,
  EnvironmentRegistryConfigError,
  EnvironmentRegistryDecodeError,
  EnvironmentRegistryHttpError,
  statusText,
} from './errors.js';
import {
  ERROR_BODY_PREVIEW_BYTES,
  fetchPost,
  type HttpPost,
  type HttpTextResponse,
  postJson,
} from './httpJson.js';
import {
  type ConnectRequestBody,
  ConnectResponseBody,
  NOISE_RELAY_SECURITY_PROFILE,
  type RegisterRequestBody,
  RegisterResponseBody,
  RegistryErrorBody,
  type ValidateRequestBody,
  ValidateResponseBody,
} from './wire.js';

/** `DEFAULT_REMOTE_EXEC_SERVER_CONNECT_TIMEOUT`: per-request deadline of registry calls. */
export const REGISTRY_REQUEST_TIMEOUT_MS = 10_000;
/** `INITIAL_REGISTRY_REQUEST_TIMEOUT`: the client's tighter bound on each initial lookup. */
export const INITIAL_REGISTRY_REQUEST_TIMEOUT_MS = 6_000;
/** `HARNESS_KEY_VALIDATION_TIMEOUT`: the executor's bound on one `/validate`. */
export const HARNESS_KEY_VALIDATION_TIMEOUT_MS = 10_000;
/** Header naming the relay stream a `/validate` call is about (seen on codex 0.169.0). */
export const NOISE_STREAM_ID_HEADER = 'x-codex-noise-stream-id';

/** Where the registry is, how to authenticate, and the deadlines of its requests. */
export interface EnvironmentRegistryClientOptions {
  /** Registry base URL; surrounding whitespace and trailing slashes are ignored. */
  readonly baseUrl: string;
  /** Sent as `Authorization: Bearer <token>`. */
  readonly bearerToken: string;
  /** Sent as `chatgpt-account-id` when set. */
  readonly chatgptAccountId?: string;
  readonly requestTimeoutMs?: number;
  /** W3C trace headers for each request (`traceparent`/`tracestate`), when a span is active. */
  readonly traceContext?: () => { traceparent?: string; tracestate?: string } | undefined;
  readonly scheduler?: SchedulerLike;
  /** The `fetch` requests go through; default the global one. Ignored when `post` is set. */
  readonly fetch?: typeof fetch;
  /** How each request is made; default `fetchPost(fetch)`. */
  readonly post?: HttpPost;
}

/** The executor's registration: where to attach, and the id bound into every prologue. */
export interface EnvironmentRegistration {
  readonly environmentId: string;
  readonly websocketUrl: string;
  readonly executorRegistrationId: string;
}

/**
 * One single-use connection attempt for a harness: the rendezvous URL, the executor's identity
 * and an authorization for our key. Never mix fields of two bundles.
 */
export interface NoiseRendezvousConnectBundle {
  readonly websocketUrl: string;
  readonly environmentId: string;
  readonly executorRegistrationId: string;
  /** Unparsed; `src/noise` (`NoiseChannelPublicKey.fromJSON`) checks suite and encodings. */
  readonly executorPublicKey: NoiseChannelPublicKeyJson;
  readonly harnessKeyAuthorization: string;
}

/**
 * What an executor asks `/validate` about the harness key a handshake presented, with its
 * authorization.
 */
export interface HarnessKeyValidationRequest {
  readonly executorRegistrationId: string;
  readonly harnessPublicKey: NoiseChannelPublicKeyJson;
  readonly harnessKeyAuthorization: string;
  /** The relay stream the handshake arrived on; sent as `x-codex-noise-stream-id`. */
  readonly streamId: string;
}

/**
 * HTTP client of an environment registry (noise-relay.md §6.1): `/register` for executors,
 * `/connect` for harnesses, `/validate` for an executor checking a harness key. Errors are typed
 * (`isRetryableRegistryError` says which are worth retrying).
 */
export class EnvironmentRegistryClient {
  readonly baseUrl: string;
  private readonly authHeaders: Readonly<Record<string, string>>;

  constructor(private readonly options: EnvironmentRegistryClientOptions) {
    this.baseUrl = normalizeBaseUrl(options.baseUrl);
    this.authHeaders = authHeaders(options.bearerToken, options.chatgptAccountId);
  }

  /** Executor: registers its static public key and gets a rendezvous URL. */
  register(
    environmentId: string,
    executorPublicKey: NoiseChannelPublicKeyJson,
  ): Observable<EnvironmentRegistration> {
    const body: RegisterRequestBody = {
      security_profile: NOISE_RELAY_SECURITY_PROFILE,
      executor_public_key: executorPublicKey,
    };
    return this.call(environmentId, 'register', body).pipe(
      map((response) => {
        const registration = decodeSuccess(response, RegisterResponseBody);
        if (registration.executor_registration_id.trim() === '') {
          throw new ProtocolError(
            'environment registry returned an empty executor registration id',
          );
        }
        checkRendezvousUrl(registration.url);
        checkEcho(environmentId.trim(), registration);
        return {
          environmentId: registration.environment_id,
          websocketUrl: registration.url,
          executorRegistrationId: registration.executor_registration_id,
        };
      }),
    );
  }

  /** Harness: asks for a fresh connect bundle authorizing `harnessPublicKey`. */
  connect(
    environmentId: string,
    harnessPublicKey: NoiseChannelPublicKeyJson,
  ): Observable<NoiseRendezvousConnectBundle> {
    const body: ConnectRequestBody = { harness_public_key: harnessPublicKey };
    return this.call(environmentId, 'connect', body).pipe(
      map((response) => {
        const bundle = decodeSuccess(response, ConnectResponseBody);
        checkEcho(environmentId.trim(), bundle);
        if (
          bundle.url.trim() === '' ||
          bundle.executor_registration_id.trim() === '' ||
          bundle.harness_key_authorization.trim() === ''
        ) {
          throw new ProtocolError('environment registry returned incomplete Noise connection data');
        }
        checkRendezvousUrl(bundle.url);
        return {
          websocketUrl: bundle.url,
          environmentId: bundle.environment_id,
          executorRegistrationId: bundle.executor_registration_id,
          executorPublicKey: bundle.executor_public_key,
          harnessKeyAuthorization: bundle.harness_key_authorization,
        };
      }),
    );
  }

  /**
   * Executor: asks the registry whether the Noise-authenticated harness key may use this
   * executor. Completes after one `undefined` on `{"valid": true}`; errors otherwise. Error
   * bodies are never surfaced: they might echo the authorization.
   */
  validate(environmentId: string, request: HarnessKeyValidationRequest): Observable<void> {
    const body: ValidateRequestBody = {
      executor_registration_id: request.executorRegistrationId,
      harness_public_key: request.harnessPublicKey,
      harness_key_authorization: request.harnessKeyAuthorization,
    };
    const headers = { [NOISE_STREAM_ID_HEADER]: request.streamId };
    return this.call(environmentId, 'validate', body, headers).pipe(
      map((response) => {
        const { status } = response;
        if (status === 401 || status === 403) {
          throw new EnvironmentRegistryAuthError(
            status,
            `environment registry harness key validation authentication failed (${statusText(status)})`,
          );
        }
        if (!isSuccess(status)) {
          throw new EnvironmentRegistryHttpError(
            status,
            undefined,
            'environment registry harness key validation failed',
          );
        }
        if (!decodeJson(response.body, ValidateResponseBody).valid) {
          throw new ProtocolError('environment registry rejected Noise relay harness key');
        }
      }),
    );
  }

  /** Lazy: argument checks and trace headers happen at subscription, errors go downstream. */
  private call(
    environmentId: string,
    operation: 'register' | 'connect' | 'validate',
    body: unknown,
    extraHeaders: Record<string, string> = {},
  ): Observable<HttpTextResponse> {
    return defer(() => {
      const url = endpointUrl(this.baseUrl, normalizeEnvironmentId(environmentId), operation);
      const trace = this.options.traceContext?.();
      const headers: Record<string, string> = { ...this.authHeaders, ...extraHeaders };
      if (trace?.traceparent) headers.traceparent = trace.traceparent;
      if (trace?.tracestate) headers.tracestate = trace.tracestate;
      return postJson(url, body, {
        headers,
        timeoutMs: this.options.requestTimeoutMs ?? REGISTRY_REQUEST_TIMEOUT_MS,
        ...(this.options.scheduler ? { scheduler: this.options.scheduler } : {}),
        post: this.options.post ?? fetchPost(this.options.fetch),
      });
    });
  }
}

function isSuccess(status: number): boolean {
  return status >= 200 && status < 300;
}

/** 2xx → decoded body; 401/403 → auth error; anything else → HTTP error with the registry's text. */
function decodeSuccess<T>(response: HttpTextResponse, schema: z.ZodType<T>): T {
  const { status, body } = response;
  if (isSuccess(status)) return decodeJson(body, schema);
  const parsed = parseErrorBody(body);
  if (status === 401 || status === 403) {
    const message = parsed?.message ?? preview(body) ?? 'empty error body';
    throw new EnvironmentRegistryAuthError(
      status,
      `environment registry authentication failed (${statusText(status)}): ${message}`,
    );
  }
  if (parsed) {
    throw new EnvironmentRegistryHttpError(
      status,
      parsed.code,
      parsed.message ?? preview(body) ?? 'empty error body',
    );
  }
  throw new EnvironmentRegistryHttpError(
    status,
    undefined,
    preview(body) ?? 'empty or malformed error body',
  );
}

function decodeJson<T>(body: string, schema: z.ZodType<T>): T {
  let json: unknown;
  try {
    json = JSON.parse(body);
  } catch (error) {
    throw new EnvironmentRegistryDecodeError(
      `error decoding environment registry response body: ${(error as Error).message}`,
      { cause: error },
    );
  }
  const result = schema.safeParse(json);
  if (!result.success) {
    const issue = result.error.issues[0];
    const where = issue && issue.path.length > 0 ? ` at ${issue.path.join('.')}` : '';
    throw new EnvironmentRegistryDecodeError(
      `error decoding environment registry response body${where}: ${issue?.message ?? 'invalid shape'}`,
      { cause: result.error },
    );
  }
  return result.data;
}

/** `{"error":{"code","message"}}` when the body has that shape (a complete preview only). */
function parseErrorBody(body: string): { code?: string; message?: string } | undefined {
  if (platform.utf8ByteLength(body) > ERROR_BODY_PREVIEW_BYTES) return undefined;
  try {
    const parsed = RegistryErrorBody.safeParse(JSON.parse(body));
    const error = parsed.success ? parsed.data.error : undefined;
    if (!error) return undefined;
    const code = error.code ? preview(error.code) : undefined;
    const message = error.message ? preview(error.message) : undefined;
    return { ...(code ? { code } : {}), ...(message ? { message } : {}) };
  } catch {
    return undefined;
  }
}

/** Trimmed text, cut to 4096 bytes with a " [truncated]" marker; undefined when blank. */
function preview(text: string): string | undefined {
  const trimmed = text.trim();
  if (trimmed === '') return undefined;
  const bytes = platform.utf8Encode(trimmed);
  if (bytes.length <= ERROR_BODY_PREVIEW_BYTES) return trimmed;
  const suffix = ' [truncated]';
  // Decoding a cut byte string may end in U+FFFD; drop it so no broken character remains.
  const head = platform.utf8Decode(bytes.subarray(0, ERROR_BODY_PREVIEW_BYTES - suffix.length));
  return `${head.replace(/\uFFFD$/, '')}${suffix}`;
}

function checkEcho(
  environmentId: string,
  response: { environment_id: string; security_profile: string },
): void {
  if (response.environment_id !== environmentId) {
    throw new ProtocolError('environment registry returned a different environment id');
  }
  if (response.security_profile !== NOISE_RELAY_SECURITY_PROFILE) {
    throw new ProtocolError(
      `environment registry returned unsupported security profile \`${response.security_profile}\``,
    );
  }
}

function checkRendezvousUrl(value: string): void {
  let url: URL | undefined;
  try {
    url = new URL(value);
  } catch {
    url = undefined;
  }
  if (!url || (url.protocol !== 'ws:' && url.protocol !== 'wss:') || url.hostname === '') {
    throw new ProtocolError('environment registry returned an invalid rendezvous URL');
  }
}

function normalizeBaseUrl(baseUrl: string): string {
  const trimmed = baseUrl.trim().replace(/\/+$/, '');
  if (trimmed === '') {
    throw new EnvironmentRegistryConfigError('environment registry base URL is required');
  }
  try {
    const url = new URL(trimmed);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error(url.protocol);
  } catch {
    throw new EnvironmentRegistryConfigError(
      `environment registry base URL \`${trimmed}\` is not an http(s) URL`,
    );
  }
  return trimmed;
}

function normalizeEnvironmentId(environmentId: string): string {
  const id = environmentId.trim();
  if (id === '') {
    throw new EnvironmentRegistryConfigError(
      'environment id is required for remote exec-server registration',
    );
  }
  if (id === '.' || id === '..') {
    throw new EnvironmentRegistryConfigError('environment id must not be a URL dot segment');
  }
  return id;
}

/**
 * `{base}/cloud/environment/{id}/{operation}`. The id is one escaped path segment, so it can
 * never redirect the bearer token to another registry path (ids of letters, digits, `-` and
 * `_` come out exactly as codex's plain concatenation would put them).
 */
function endpointUrl(baseUrl: string, environmentId: string, operation: string): string {
  return `${baseUrl}/cloud/environment/${encodeURIComponent(environmentId)}/${operation}`;
}

function authHeaders(bearerToken: string, chatgptAccountId?: string): Record<string, string> {
  const token = bearerToken.trim();
  if (token === '') {
    throw new EnvironmentRegistryConfigError('environment registry bearer token is required');
  }
  if (/[\r\n]/.test(token)) {
    throw new EnvironmentRegistryConfigError(
      'environment registry bearer token is not a valid HTTP header',
    );
  }
  const headers: Record<string, string> = { authorization: `Bearer ${token}` };
  const account = chatgptAccountId?.trim();
  if (account) {
    if (/[\r\n]/.test(account)) {
      throw new EnvironmentRegistryConfigError('ChatGPT account id is not a valid HTTP header');
    }
    headers['chatgpt-account-id'] = account;
  }
  return headers;
}
