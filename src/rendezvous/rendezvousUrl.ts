/**
 * Signed rendezvous URLs (noise-relay.md §6.2):
 * `…/ws/environment/<id>?role=…&registration=…&exp=…&sig=…`. The `sig` query parameter is the
 * only authentication on the WebSocket upgrade: an HMAC over role, environment, registration
 * and expiry (ms since the epoch), so a URL handed to a harness cannot be turned into the
 * executor's URL, moved to another environment or used past its expiry without the secret.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

/** Who a signed rendezvous URL is for: the executor's socket or a harness's. */
export type RendezvousRole = 'environment' | 'harness';

/** What a signed rendezvous URL grants: one role on one registration of one environment. */
export interface RendezvousUrlClaims {
  readonly role: RendezvousRole;
  readonly environmentId: string;
  readonly registrationId: string;
  /** Upgrades with this URL are refused from this instant on. */
  readonly expiresAtMs: number;
}

const PATH_PREFIX = '/ws/environment/';

/** `wsBase` is `ws://host:port` (or `wss://…`), no trailing slash. */
export function signRendezvousUrl(
  wsBase: string,
  secret: Uint8Array,
  claims: RendezvousUrlClaims,
): string {
  const query = new URLSearchParams({
    role: claims.role,
    registration: claims.registrationId,
    exp: String(Math.floor(claims.expiresAtMs)),
    sig: signature(secret, claims),
  });
  return `${wsBase}${PATH_PREFIX}${encodeURIComponent(claims.environmentId)}?${query.toString()}`;
}

/** Why an upgrade request was refused: an unknown route, a bad signature, an expired URL. */
export type RendezvousUrlProblem = 'not_found' | 'bad_signature' | 'expired';

/** The claims of a rendezvous URL whose signature checked out, or why it was refused. */
export type ParsedRendezvousUrl =
  | { readonly ok: true; readonly claims: RendezvousUrlClaims }
  | { readonly ok: false; readonly problem: RendezvousUrlProblem };

/** Parses and verifies the request target of an upgrade (`/ws/environment/<id>?…`). */
export function verifyRendezvousUrl(
  requestTarget: string,
  secret: Uint8Array,
  nowMs: number,
): ParsedRendezvousUrl {
  let url: URL;
  try {
    url = new URL(requestTarget, 'http://rendezvous.invalid');
  } catch {
    return { ok: false, problem: 'not_found' };
  }
  if (!url.pathname.startsWith(PATH_PREFIX)) return { ok: false, problem: 'not_found' };
  const encodedId = url.pathname.slice(PATH_PREFIX.length);
  if (encodedId === '' || encodedId.includes('/')) return { ok: false, problem: 'not_found' };
  let environmentId: string;
  try {
    environmentId = decodeURIComponent(encodedId);
  } catch {
    return { ok: false, problem: 'not_found' };
  }
  const role = url.searchParams.get('role');
  const registrationId = url.searchParams.get('registration');
  const sig = url.searchParams.get('sig');
  const exp = url.searchParams.get('exp') ?? '';
  if (
    (role !== 'environment' && role !== 'harness') ||
    !registrationId ||
    !sig ||
    !/^\d{1,16}$/.test(exp)
  ) {
    return { ok: false, problem: 'bad_signature' };
  }
  const claims: RendezvousUrlClaims = {
    role,
    environmentId,
    registrationId,
    expiresAtMs: Number(exp),
  };
  // Compared as text: decoding would ignore the spare bits of the last base64 character.
  const expected = Buffer.from(signature(secret, claims));
  const given = Buffer.from(sig);
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
    return { ok: false, problem: 'bad_signature' };
  }
  if (nowMs >= claims.expiresAtMs) return { ok: false, problem: 'expired' };
  return { ok: true, claims };
}

function signature(secret: Uint8Array, claims: RendezvousUrlClaims): string {
  return createHmac('sha256', secret)
    .update(
      JSON.stringify([
        'rendezvous-url',
        claims.role,
        claims.environmentId,
        claims.registrationId,
        Math.floor(claims.expiresAtMs),
      ]),
    )
    .digest('base64url');
}
