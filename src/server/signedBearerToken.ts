/**
 * `--ws-auth signed-bearer-token`: an HS256 JWT in `Authorization: Bearer`, checked as the
 * binary checks it (probed on 0.169.0, FINDINGS.md): `alg` exactly `HS256`, an integer `exp`
 * required, an integer `nbf` honoured, both with `--ws-max-clock-skew-seconds` (default 30) of
 * slack; `iss` and `aud` (a string or an array of strings) compared when configured. The
 * checks run in the binary's order (format and signature, expiry, not-before, issuer,
 * audience), each failure with its text. The signature is compared in constant time. Guarded by
 * spec/server/signedBearerToken.spec.ts and spec/conformance/webSocketAuth.spec.ts.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { TextDecoder } from 'node:util';
import { parseJson } from './jsonSyntax.js';

export interface SignedBearerTokenPolicy {
  /** The shared secret, trimmed, at least MIN_SHARED_SECRET_BYTES long. */
  readonly secret: Buffer;
  readonly issuer?: string;
  readonly audience?: string;
  readonly maxClockSkewSeconds: number;
}

export const MIN_SHARED_SECRET_BYTES = 32;
export const DEFAULT_MAX_CLOCK_SKEW_SECONDS = 30;

/** The binary's 401 texts for a signed bearer token. */
const JwtRefusal = {
  invalid: 'invalid websocket jwt',
  expired: 'expired websocket jwt',
  notYetValid: 'websocket jwt is not valid yet',
  issuerMismatch: 'websocket jwt issuer mismatch',
  audienceMismatch: 'websocket jwt audience mismatch',
} as const;
export type JwtRefusal = (typeof JwtRefusal)[keyof typeof JwtRefusal];

/** One unpadded base64url segment. */
const BASE64URL = /^[A-Za-z0-9_-]*$/;
/** Claims are serde i64 values: integers within ±2^63. */
const I64_LIMIT = 2 ** 63;
/** A JWT longer than this is refused unread (an HTTP header line is far shorter anyway). */
const MAX_TOKEN_CHARS = 16 * 1024;

const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

/** The JSON object in a base64url segment, or undefined when it is anything else. */
function jsonObject(segment: string): Record<string, unknown> | undefined {
  let text: string;
  try {
    text = strictUtf8.decode(Buffer.from(segment, 'base64url'));
  } catch {
    return undefined;
  }
  const parsed = parseJson(text);
  if (!('value' in parsed)) return undefined;
  const { value } = parsed;
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined;
}

const isI64 = (value: unknown): value is number =>
  Number.isInteger(value) && Math.abs(value as number) < I64_LIMIT;

const isStringList = (value: unknown): value is string[] =>
  Array.isArray(value) && value.every((item) => typeof item === 'string');

/** Why `token` is refused at `nowSeconds`, or undefined when it is good. */
export function signedBearerTokenRefusal(
  token: string,
  policy: SignedBearerTokenPolicy,
  nowSeconds: number,
): JwtRefusal | undefined {
  if (token.length > MAX_TOKEN_CHARS) return JwtRefusal.invalid;
  const segments = token.split('.');
  if (segments.length !== 3 || !segments.every((segment) => BASE64URL.test(segment)))
    return JwtRefusal.invalid;
  const [headerText, claimsText, signatureText] = segments as [string, string, string];
  if (jsonObject(headerText)?.alg !== 'HS256') return JwtRefusal.invalid;
  const expected = createHmac('sha256', policy.secret)
    .update(`${headerText}.${claimsText}`)
    .digest();
  const signature = Buffer.from(signatureText, 'base64url');
  if (signature.length !== expected.length || !timingSafeEqual(signature, expected))
    return JwtRefusal.invalid;

  const claims = jsonObject(claimsText);
  if (claims === undefined) return JwtRefusal.invalid;
  const { exp, nbf, iss, aud } = claims;
  if (!isI64(exp)) return JwtRefusal.invalid;
  if (nbf != null && !isI64(nbf)) return JwtRefusal.invalid;
  if (iss != null && typeof iss !== 'string') return JwtRefusal.invalid;
  if (aud != null && typeof aud !== 'string' && !isStringList(aud)) return JwtRefusal.invalid;

  const skew = policy.maxClockSkewSeconds;
  if (exp < nowSeconds - skew) return JwtRefusal.expired;
  if (nbf != null && nbf > nowSeconds + skew) return JwtRefusal.notYetValid;
  if (policy.issuer !== undefined && iss !== policy.issuer) return JwtRefusal.issuerMismatch;
  if (policy.audience !== undefined) {
    const audiences = aud == null ? [] : typeof aud === 'string' ? [aud] : aud;
    if (!audiences.includes(policy.audience)) return JwtRefusal.audienceMismatch;
  }
  return undefined;
}
