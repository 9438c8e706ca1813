/**
 * The registry's HTTP side (noise-relay.md §6.1): `POST /cloud/environment/{id}/register`
 * (executor), `…/connect` (harness), `…/validate` (executor). Bodies are snake_case JSON
 * checked with zod; failures answer `{"error":{"code","message"}}` with the statuses the
 * registry client classifies (401 auth, 404 unknown environment, 409 `environment_offline`
 * while no executor is attached — retryable for harnesses), plus `DELETE /cloud/environment/{id}`
 * for the owner of a registration. Browsers (a request with `Origin`) reach `/connect` only,
 * and only from an allowed origin.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ZodType } from 'zod';
import { NoiseChannelPublicKey, type NoiseChannelPublicKeyJson } from '../noise/index.js';
import { NOISE_RELAY_SECURITY_PROFILE } from '../registry/index.js';
import { escapeForLog, isEnvironmentId, tokenMatches, type TokenPair } from './trust.js';
import {
  ConnectRequest,
  DeleteRequest,
  RegisterRequest,
  type RegistryErrorCode,
  ValidateRequest,
} from './wire.js';

/** Largest request body accepted (a registration is ~1.7 KB). */
export const MAX_REGISTRY_REQUEST_BYTES = 64 * 1024;
const NOISE_STREAM_ID_HEADER = 'x-codex-noise-stream-id';

/** What the endpoints need from the rendezvous state. Each call may fail with a RegistryRequestError. */
export interface RegistryBackend {
  /** Which tokens open `environmentId` (its own pair, else the shared one). */
  tokensFor(environmentId: string): TokenPair;
  /** Origins browser clients may call `/connect` from (exact `scheme://host[:port]`). */
  readonly allowedOrigins: ReadonlySet<string>;
  register(
    environmentId: string,
    executorPublicKey: NoiseChannelPublicKeyJson,
    executorToken: string,
  ): Promise<{ registrationId: string; url: string }>;
  /** `undefined` for an unknown environment, `'offline'` when no executor socket is attached. */
  connect(
    environmentId: string,
    harnessPublicKey: NoiseChannelPublicKeyJson,
  ): Promise<
    | {
        registrationId: string;
        url: string;
        executorPublicKey: NoiseChannelPublicKeyJson;
        authorization: string;
      }
    | 'offline'
    | undefined
  >;
  /** `undefined` for an unknown environment. */
  validate(
    environmentId: string,
    request: ValidateRequest,
    streamId: string | undefined,
  ): Promise<boolean | undefined>;
  /**
   * The owner deletes its registration: `url` is the `role=environment` URL `/register`
   * returned (only the registrant has it). False when it does not name the current one.
   */
  remove(environmentId: string, url: string): Promise<boolean>;
}

export class RegistryRequestError extends Error {
  constructor(
    readonly status: number,
    readonly code: RegistryErrorCode,
    message: string,
  ) {
    super(message);
  }
}

const ROUTE = /^\/cloud\/environment\/([^/]+)(?:\/(register|connect|validate))?$/;
const CORS_MAX_AGE_SECONDS = '600';

export function registryRequestHandler(
  backend: RegistryBackend,
): (request: IncomingMessage, response: ServerResponse) => void {
  return (request, response) => {
    handle(backend, request, response).then(
      ([status, body]) => reply(response, status, body),
      (error: unknown) => {
        if (error instanceof RegistryRequestError) {
          reply(response, error.status, { error: { code: error.code, message: error.message } });
        } else {
          reply(response, 500, {
            error: { code: 'internal_error', message: 'rendezvous registry failed' },
          });
        }
      },
    );
  };
}

/**
 * Browser requests: only `/connect` is for harnesses, so only it answers CORS, and only for
 * an allowed origin; any other request carrying `Origin` is refused (403) before its body
 * or token is looked at.
 */
function checkOrigin(
  backend: RegistryBackend,
  request: IncomingMessage,
  response: ServerResponse,
  operation: string | undefined,
): void {
  const origin = request.headers.origin;
  if (origin === undefined) return;
  if (operation !== 'connect' || !backend.allowedOrigins.has(origin)) {
    throw new RegistryRequestError(
      403,
      'origin_not_allowed',
      `browser origin is not allowed here (start the rendezvous with --allow-origin ${escapeForLog(origin)} for /connect)`,
    );
  }
  response.setHeader('access-control-allow-origin', origin);
  response.setHeader('vary', 'origin');
}

async function handle(
  backend: RegistryBackend,
  request: IncomingMessage,
  response: ServerResponse,
): Promise<[number, unknown]> {
  const path = (request.url ?? '').split('?')[0] ?? '';
  const match = ROUTE.exec(path);
  if (!match) throw new RegistryRequestError(404, 'not_found', `no registry endpoint at ${path}`);
  const operation = match[2] as 'register' | 'connect' | 'validate' | undefined;
  checkOrigin(backend, request, response, operation);
  if (request.method === 'OPTIONS' && operation === 'connect') {
    response.setHeader('access-control-allow-methods', 'POST');
    response.setHeader('access-control-allow-headers', 'authorization, content-type');
    response.setHeader('access-control-max-age', CORS_MAX_AGE_SECONDS);
    return [204, undefined];
  }
  const environmentId = decodeEnvironmentId(match[1]!);
  const method = operation === undefined ? 'DELETE' : 'POST';
  if (request.method !== method) {
    throw new RegistryRequestError(
      405,
      'method_not_allowed',
      operation === undefined ? 'an environment takes DELETE' : `${operation} takes ${method}`,
    );
  }
  const tokens = backend.tokensFor(environmentId);
  const token = operation === 'connect' ? tokens.harness : tokens.executor;
  if (!hasBearer(request, token)) {
    throw new RegistryRequestError(401, 'unauthorized', 'missing or wrong bearer token');
  }
  const text = await readBody(request);

  switch (operation) {
    case 'register': {
      const body = parse(text, RegisterRequest);
      checkKey(body.executor_public_key, 'executor_public_key');
      const registration = await backend.register(
        environmentId,
        body.executor_public_key,
        tokens.executor,
      );
      return [
        200,
        {
          environment_id: environmentId,
          url: registration.url,
          security_profile: NOISE_RELAY_SECURITY_PROFILE,
          executor_registration_id: registration.registrationId,
        },
      ];
    }
    case 'connect': {
      const body = parse(text, ConnectRequest);
      checkKey(body.harness_public_key, 'harness_public_key');
      const bundle = await backend.connect(environmentId, body.harness_public_key);
      if (bundle === undefined) throw environmentNotFound(environmentId);
      if (bundle === 'offline') {
        throw new RegistryRequestError(
          409,
          'environment_offline',
          `environment \`${environmentId}\` has no executor connected; retry later`,
        );
      }
      return [
        200,
        {
          environment_id: environmentId,
          url: bundle.url,
          security_profile: NOISE_RELAY_SECURITY_PROFILE,
          executor_registration_id: bundle.registrationId,
          executor_public_key: bundle.executorPublicKey,
          harness_key_authorization: bundle.authorization,
        },
      ];
    }
    case 'validate': {
      const body = parse(text, ValidateRequest);
      const header = request.headers[NOISE_STREAM_ID_HEADER];
      const streamId = typeof header === 'string' ? header : undefined;
      const valid = await backend.validate(environmentId, body, streamId);
      if (valid === undefined) throw environmentNotFound(environmentId);
      return [200, { valid }];
    }
    case undefined: {
      const body = parse(text, DeleteRequest);
      if (!(await backend.remove(environmentId, body.url))) {
        throw new RegistryRequestError(
          404,
          'environment_not_found',
          `environment \`${environmentId}\` has no registration with that URL`,
        );
      }
      return [200, { deleted: true }];
    }
  }
}

function environmentNotFound(environmentId: string): RegistryRequestError {
  return new RegistryRequestError(
    404,
    'environment_not_found',
    `environment \`${environmentId}\` is not registered`,
  );
}

function decodeEnvironmentId(segment: string): string {
  let id: string;
  try {
    id = decodeURIComponent(segment);
  } catch {
    throw new RegistryRequestError(400, 'invalid_request', 'environment id is not valid UTF-8');
  }
  if (!isEnvironmentId(id)) {
    throw new RegistryRequestError(
      400,
      'invalid_environment_id',
      'environment ids are 1-128 characters of A-Z a-z 0-9 . _ : - starting with a letter or digit',
    );
  }
  return id;
}

function hasBearer(request: IncomingMessage, token: string): boolean {
  const header = request.headers.authorization ?? '';
  const match = /^Bearer (.+)$/.exec(header);
  return match !== null && tokenMatches(match[1]!.trim(), token);
}

function readBody(request: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    request.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_REGISTRY_REQUEST_BYTES) {
        reject(
          new RegistryRequestError(
            413,
            'payload_too_large',
            `request body exceeds ${MAX_REGISTRY_REQUEST_BYTES} bytes`,
          ),
        );
        request.resume();
        return;
      }
      chunks.push(chunk);
    });
    request.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    request.on('error', reject);
  });
}

function parse<T>(text: string, schema: ZodType<T>): T {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new RegistryRequestError(
      400,
      'invalid_request',
      `request body is not JSON: ${(error as Error).message}`,
    );
  }
  const result = schema.safeParse(json);
  if (!result.success) {
    const issue = result.error.issues[0];
    const where = issue && issue.path.length > 0 ? ` at ${issue.path.join('.')}` : '';
    throw new RegistryRequestError(
      400,
      'invalid_request',
      `invalid request body${where}: ${issue?.message ?? 'invalid shape'}`,
    );
  }
  return result.data;
}

/** The key must be usable for a handshake: right suite, canonical base64, right lengths. */
function checkKey(key: NoiseChannelPublicKeyJson, field: string): void {
  try {
    NoiseChannelPublicKey.fromJSON(key);
  } catch (error) {
    throw new RegistryRequestError(
      400,
      'invalid_public_key',
      `${field}: ${(error as Error).message}`,
    );
  }
}

function reply(response: ServerResponse, status: number, body: unknown): void {
  if (response.headersSent) return;
  if (body === undefined) {
    response.writeHead(status).end();
    return;
  }
  const text = JSON.stringify(body);
  response
    .writeHead(status, {
      'content-type': 'application/json',
      'content-length': Buffer.byteLength(text),
      // An unread oversized body must not keep the connection in a half-read state.
      ...(status === 413 ? { connection: 'close' } : {}),
    })
    .end(text);
}
