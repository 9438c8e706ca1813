/**
 * The WebSocket opening handshake of the `--listen` server (RFC 6455 §4.2), checked as the
 * binary's axum `WebSocketUpgrade` checks it: the same checks in the same order, the same
 * statuses and texts, and any `Sec-WebSocket-Key` accepted as it is. No subprotocol or
 * extension is ever agreed (the binary offers none, so no compression either).
 */
import { createHash } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';

/** An HTTP answer that refuses a request. */
export interface HttpRefusal {
  readonly status: number;
  readonly body: string;
}

/** What the handshake checks of a request. */
export interface UpgradeRequest {
  readonly method?: string;
  readonly httpVersion: string;
  readonly headers: IncomingHttpHeaders;
  /** Each header's values as sent (Node's `IncomingMessage` has them). */
  readonly headersDistinct?: NodeJS.Dict<string[]>;
}

const WEBSOCKET_GUID = '258EAFA5-E914-47DA-95CA-C5AB0DC85B11';

const STATUS_TEXT: Readonly<Record<number, string>> = {
  200: 'OK',
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  426: 'Upgrade Required',
};

/**
 * The first value of header `name`, as axum reads it (`HeaderMap::get`): of two `Connection`
 * lines only the first counts, where Node's `headers` would join them.
 */
export function firstHeader(request: UpgradeRequest, name: string): string | undefined {
  const value = request.headersDistinct?.[name]?.[0] ?? request.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/** Whether the comma-separated header lists `token` (any case). */
function listsToken(value: string | undefined, token: string): boolean {
  return (value ?? '').split(',').some((item) => item.trim().toLowerCase() === token);
}

/** Why the request to `/` cannot become a WebSocket, or undefined when it can. */
export function upgradeRefusal(request: UpgradeRequest): HttpRefusal | undefined {
  if (request.method !== 'GET') return { status: 405, body: 'Request method must be `GET`' };
  if (!listsToken(firstHeader(request, 'connection'), 'upgrade'))
    return { status: 400, body: "Connection header did not include 'upgrade'" };
  if (firstHeader(request, 'upgrade')?.toLowerCase() !== 'websocket')
    return { status: 400, body: "`Upgrade` header did not include 'websocket'" };
  if (firstHeader(request, 'sec-websocket-version') !== '13')
    return { status: 400, body: "`Sec-WebSocket-Version` header did not include '13'" };
  if (firstHeader(request, 'sec-websocket-key') === undefined)
    return { status: 400, body: '`Sec-WebSocket-Key` header missing' };
  // HTTP/1.0 has no protocol switch (hyper then offers no upgrade).
  if (request.httpVersion === '1.0') {
    return {
      status: 426,
      body: "WebSocket request couldn't be upgraded since no upgrade state was present",
    };
  }
  return undefined;
}

/** `Sec-WebSocket-Accept` for a `Sec-WebSocket-Key` (RFC 6455 §4.2.2). */
export function acceptKey(key: string): string {
  return createHash('sha1')
    .update(key + WEBSOCKET_GUID)
    .digest('base64');
}

/** The `101 Switching Protocols` head for a request with `key`, with the binary's headers. */
export function switchingProtocols(key: string): string {
  return (
    'HTTP/1.1 101 Switching Protocols\r\nconnection: upgrade\r\nupgrade: websocket\r\n' +
    `sec-websocket-accept: ${acceptKey(key)}\r\ndate: ${new Date().toUTCString()}\r\n\r\n`
  );
}

/**
 * A whole HTTP response that answers a request on a socket taken over for an upgrade, and
 * closes it. (The binary keeps such a connection alive for further requests; after an upgrade
 * attempt Node's HTTP parser has let go of the socket, so this server closes it.)
 */
export function closingResponse(
  httpVersion: string,
  { status, body }: HttpRefusal,
  method?: string,
): string {
  const type = body === '' ? '' : 'content-type: text/plain; charset=utf-8\r\n';
  return (
    `HTTP/${httpVersion === '1.0' ? '1.0' : '1.1'} ${status} ${STATUS_TEXT[status] ?? ''}\r\n` +
    `${type}content-length: ${Buffer.byteLength(body)}\r\ndate: ${new Date().toUTCString()}\r\n` +
    `connection: close\r\n\r\n${method === 'HEAD' ? '' : body}`
  );
}
