/**
 * Authentication of WebSocket upgrades, flag for flag as `codex exec-server --ws-auth`
 * (probed on 0.169.0, FINDINGS.md): the credential travels only in `Authorization: Bearer
 * <token>` (scheme in any case, token trimmed). `capability-token` compares the token's
 * SHA-256 with the configured one in constant time; `signed-bearer-token` checks an HS256 JWT
 * (signedBearerToken.ts). Refusals are 401s with the binary's texts; they come after the
 * handshake checks (a plain `GET /` is still 400) and the `Origin` refusal (403).
 * Misconfigurations are refused before serving with the binary's messages. Guarded by
 * spec/server/webSocketAuth.spec.ts and spec/conformance/webSocketAuth.spec.ts.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { describeOsError } from './osError.js';
import {
  DEFAULT_MAX_CLOCK_SKEW_SECONDS,
  MIN_SHARED_SECRET_BYTES,
  signedBearerTokenRefusal,
  type SignedBearerTokenPolicy,
} from './signedBearerToken.js';
import type { HttpRefusal } from './webSocketUpgrade.js';
import type { WebSocketAuthMode } from './webSocketAuthMode.js';

export type WebSocketAuth =
  | { readonly mode: 'capability-token'; readonly tokenSha256: Buffer }
  | ({ readonly mode: 'signed-bearer-token' } & SignedBearerTokenPolicy);

/** The `--ws-*` command-line flags, as given. */
export interface WebSocketAuthFlags {
  readonly mode?: WebSocketAuthMode;
  readonly tokenFile?: string;
  readonly tokenSha256?: string;
  readonly sharedSecretFile?: string;
  readonly issuer?: string;
  readonly audience?: string;
  readonly maxClockSkewSeconds?: number;
}

/** The 401 texts that do not depend on the mode. */
const AuthRefusal = {
  missing: 'missing websocket bearer token',
  malformed: 'invalid authorization header',
  invalidToken: 'invalid websocket bearer token',
} as const;

/**
 * The authentication the flags configure (undefined: none), reading the secret files now.
 * Throws an Error with the binary's message for every combination the binary refuses.
 */
export function loadWebSocketAuth(flags: WebSocketAuthFlags): WebSocketAuth | undefined {
  const tokenFlags = flags.tokenFile !== undefined || flags.tokenSha256 !== undefined;
  const signedFlags =
    flags.sharedSecretFile !== undefined ||
    flags.issuer !== undefined ||
    flags.audience !== undefined ||
    flags.maxClockSkewSeconds !== undefined;
  switch (flags.mode) {
    case undefined:
      if (tokenFlags || signedFlags) {
        throw new Error(
          'websocket auth flags require `--ws-auth capability-token` or `--ws-auth signed-bearer-token`',
        );
      }
      return undefined;
    case 'capability-token':
      if (signedFlags) {
        throw new Error(
          '`--ws-shared-secret-file`, `--ws-issuer`, `--ws-audience`, and `--ws-max-clock-skew-seconds` require `--ws-auth signed-bearer-token`',
        );
      }
      return { mode: 'capability-token', tokenSha256: capabilityTokenDigest(flags) };
    case 'signed-bearer-token': {
      if (tokenFlags) {
        throw new Error(
          '`--ws-token-file` and `--ws-token-sha256` require `--ws-auth capability-token`, not `signed-bearer-token`',
        );
      }
      if (flags.sharedSecretFile === undefined) {
        throw new Error(
          '`--ws-shared-secret-file` is required when `--ws-auth signed-bearer-token` is set',
        );
      }
      const secret = readSecret(flags.sharedSecretFile);
      if (secret.length < MIN_SHARED_SECRET_BYTES) {
        throw new Error(
          `signed websocket bearer secret ${flags.sharedSecretFile} must be at least ${MIN_SHARED_SECRET_BYTES} bytes`,
        );
      }
      return {
        mode: 'signed-bearer-token',
        secret,
        ...(flags.issuer === undefined ? {} : { issuer: flags.issuer }),
        ...(flags.audience === undefined ? {} : { audience: flags.audience }),
        maxClockSkewSeconds: flags.maxClockSkewSeconds ?? DEFAULT_MAX_CLOCK_SKEW_SECONDS,
      };
    }
  }
}

function capabilityTokenDigest(flags: WebSocketAuthFlags): Buffer {
  if (flags.tokenFile !== undefined && flags.tokenSha256 !== undefined)
    throw new Error('`--ws-token-file` and `--ws-token-sha256` are mutually exclusive');
  if (flags.tokenFile !== undefined) return sha256(readSecret(flags.tokenFile));
  if (flags.tokenSha256 === undefined) {
    throw new Error(
      '`--ws-token-file` or `--ws-token-sha256` is required when `--ws-auth capability-token` is set',
    );
  }
  if (!/^[0-9a-fA-F]{64}$/.test(flags.tokenSha256))
    throw new Error('--ws-token-sha256 must be a 64-character hex SHA-256 digest');
  return Buffer.from(flags.tokenSha256, 'hex');
}

/** A secret file's content, trimmed of surrounding whitespace (as the binary reads it). */
function readSecret(path: string): Buffer {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new Error(`failed to read websocket auth secret ${path}: ${describeOsError(error)}`);
  }
  const secret = text.trim();
  if (secret === '') throw new Error(`websocket auth secret ${path} must not be empty`);
  return Buffer.from(secret);
}

const sha256 = (data: Buffer | string): Buffer => createHash('sha256').update(data).digest();

/** The token in an `Authorization` value, or the refusal text when there is none. */
function bearerToken(authorization: string | undefined): { token: string } | { refusal: string } {
  if (authorization === undefined) return { refusal: AuthRefusal.missing };
  const space = authorization.indexOf(' ');
  if (space === -1 || authorization.slice(0, space).toLowerCase() !== 'bearer')
    return { refusal: AuthRefusal.malformed };
  const token = authorization.slice(space + 1).trim();
  return token === '' ? { refusal: AuthRefusal.malformed } : { token };
}

/** The 401 for an upgrade whose `Authorization` header `auth` does not admit, else undefined. */
export function webSocketAuthRefusal(
  auth: WebSocketAuth,
  authorization: string | undefined,
  nowMs: number = Date.now(),
): HttpRefusal | undefined {
  const presented = bearerToken(authorization);
  if ('refusal' in presented) return { status: 401, body: presented.refusal };
  const refusal =
    auth.mode === 'capability-token'
      ? timingSafeEqual(sha256(presented.token), auth.tokenSha256)
        ? undefined
        : AuthRefusal.invalidToken
      : signedBearerTokenRefusal(presented.token, auth, Math.floor(nowMs / 1000));
  return refusal === undefined ? undefined : { status: 401, body: refusal };
}
