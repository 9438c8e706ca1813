/**
 * Test helpers for WebSocket authentication: an HS256 JWT signer (written from RFC 7519, to
 * make tokens the executors must accept or refuse) and a raw upgrade probe that reports the
 * HTTP answer: `101` or the status, body and content type of a refusal.
 */
import { createHmac } from 'node:crypto';
import { request } from 'node:http';

const base64url = (value: string | Buffer): string => Buffer.from(value).toString('base64url');

/** A compact JWS of `claims` under `header` (default `{"alg":"HS256","typ":"JWT"}`). */
export function signJwt(
  secret: string,
  claims: unknown,
  header: unknown = { alg: 'HS256', typ: 'JWT' },
): string {
  return signJwtText(secret, JSON.stringify(claims), JSON.stringify(header));
}

/** As `signJwt`, with the JSON texts given as they are (duplicate keys, odd numbers). */
export function signJwtText(secret: string, claimsJson: string, headerJson: string): string {
  const signed = `${base64url(headerJson)}.${base64url(claimsJson)}`;
  return `${signed}.${createHmac('sha256', secret).update(signed).digest('base64url')}`;
}

export interface UpgradeAnswer {
  readonly status: number;
  /** The refusal's body (empty for a 101). */
  readonly body: string;
  readonly contentType?: string;
}

/** Sends one WebSocket upgrade request (plus `headers`) to `url` + `path`; closes at once. */
export function probeUpgrade(
  url: string,
  headers: Readonly<Record<string, string>> = {},
  path = '/',
  upgrade = true,
): Promise<UpgradeAnswer> {
  const { hostname, port } = new URL(url);
  const handshake = upgrade
    ? {
        Connection: 'Upgrade',
        Upgrade: 'websocket',
        'Sec-WebSocket-Version': '13',
        'Sec-WebSocket-Key': 'dGhlIHNhbXBsZSBub25jZQ==',
      }
    : {};
  return new Promise((resolve, reject) => {
    const outgoing = request({
      host: hostname,
      port,
      path,
      headers: { ...handshake, ...headers },
      agent: false,
    });
    outgoing.setTimeout(10_000, () => outgoing.destroy(new Error('no answer in 10 s')));
    outgoing.on('upgrade', (response, socket) => {
      socket.destroy();
      resolve({ status: response.statusCode ?? 0, body: '' });
    });
    outgoing.on('response', (response) => {
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (text: string) => (body += text));
      response.on('end', () => {
        const contentType = response.headers['content-type'];
        resolve({
          status: response.statusCode ?? 0,
          body,
          ...(contentType === undefined ? {} : { contentType }),
        });
      });
    });
    outgoing.on('error', reject);
    outgoing.end();
  });
}
