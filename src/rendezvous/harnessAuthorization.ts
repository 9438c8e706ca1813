/**
 * Harness key authorizations issued by `/connect` and checked by `/validate` (noise-relay.md
 * §3.3). Codex treats the string as opaque; ours is
 * `v1.<expiry ms since epoch>.<base64url HMAC-SHA256>` where the MAC covers the environment
 * id, the executor registration id, the harness key fingerprint and the expiry. So an
 * authorization is only good for one harness key, on one registration, until it expires, and
 * the registry can check it without keeping per-connect state.
 */
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import type { NoiseChannelPublicKeyJson } from '../noise/index.js';

const VERSION = 'v1';

/** What an authorization is bound to. */
export interface HarnessAuthorizationScope {
  readonly environmentId: string;
  readonly executorRegistrationId: string;
  readonly harnessPublicKey: NoiseChannelPublicKeyJson;
}

/** Why `/validate` said no (reported in rendezvous events, never to the caller). */
export type HarnessAuthorizationRejection = 'malformed' | 'expired' | 'bad_signature';

/** The outcome of `checkHarnessAuthorization`. */
export type HarnessAuthorizationCheck =
  | { readonly valid: true; readonly expiresAtMs: number }
  | { readonly valid: false; readonly reason: HarnessAuthorizationRejection };

/**
 * SHA-256 over the three key strings, base64url. Keys compare as exact strings (§3.2), so the
 * fingerprint does too: a re-encoded key is a different key.
 */
export function harnessKeyFingerprint(key: NoiseChannelPublicKeyJson): string {
  return createHash('sha256')
    .update(JSON.stringify([key.suite, key.x25519_public_key, key.mlkem768_public_key]))
    .digest('base64url');
}

/** Mints an authorization for one harness key on one registration, valid until `expiresAtMs`. */
export function issueHarnessAuthorization(
  secret: Uint8Array,
  scope: HarnessAuthorizationScope,
  expiresAtMs: number,
): string {
  const expiry = Math.floor(expiresAtMs);
  return `${VERSION}.${expiry}.${mac(secret, scope, expiry)}`;
}

/**
 * Checks an authorization against `scope` at `nowMs`: valid with its expiry, or why not (malformed,
 * expired, bad signature). Constant-time MAC comparison.
 */
export function checkHarnessAuthorization(
  secret: Uint8Array,
  scope: HarnessAuthorizationScope,
  authorization: string,
  nowMs: number,
): HarnessAuthorizationCheck {
  const match = /^v1\.(\d{1,16})\.([A-Za-z0-9_-]{43})$/.exec(authorization);
  if (!match) return { valid: false, reason: 'malformed' };
  const expiry = Number(match[1]);
  // Compare the text, not decoded bytes: base64 decoders ignore the last character's spare
  // bits, which would make several strings pass for one signature.
  const expected = Buffer.from(mac(secret, scope, expiry));
  const given = Buffer.from(match[2]!);
  // Signature before expiry: an attacker learns nothing from which check failed first.
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
    return { valid: false, reason: 'bad_signature' };
  }
  if (nowMs >= expiry) return { valid: false, reason: 'expired' };
  return { valid: true, expiresAtMs: expiry };
}

function mac(secret: Uint8Array, scope: HarnessAuthorizationScope, expiry: number): string {
  // A JSON array keeps the fields unambiguous whatever characters the ids contain.
  const message = JSON.stringify([
    'harness-key-authorization',
    scope.environmentId,
    scope.executorRegistrationId,
    harnessKeyFingerprint(scope.harnessPublicKey),
    expiry,
  ]);
  return createHmac('sha256', secret).update(message).digest('base64url');
}
