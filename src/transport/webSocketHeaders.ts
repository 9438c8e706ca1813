/**
 * Extra headers on a WebSocket upgrade request (spec/protocol.md §12.1): trusted, host-provided
 * headers such as authorization. Headers the handshake itself controls cannot be replaced, and
 * `Origin` is refused because the executor answers any request carrying it with 403.
 * Guarded by spec/transport/webSocketConnectOptions.spec.ts.
 */
import { ProtocolError } from '../protocol/errors.js';

/** Names the WebSocket handshake sets itself (compared case-insensitively). */
const HANDSHAKE_HEADERS = new Set([
  'host',
  'connection',
  'upgrade',
  'content-length',
  'transfer-encoding',
  'origin',
]);
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
/** Visible ASCII, space, tab and obs-text; no CR, LF or NUL. */
const FIELD_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/;

/** Throws ProtocolError naming the first header that cannot go on an upgrade request. */
export function validateWebSocketHeaders(headers: Readonly<Record<string, string>>): void {
  for (const [name, value] of Object.entries(headers)) {
    if (!TOKEN.test(name)) {
      throw new ProtocolError(`websocket header name \`${name}\` is not a valid HTTP header name`);
    }
    const lower = name.toLowerCase();
    if (HANDSHAKE_HEADERS.has(lower) || lower.startsWith('sec-websocket-')) {
      throw new ProtocolError(
        `websocket header \`${name}\` is controlled by the WebSocket handshake and cannot be set`,
      );
    }
    if (typeof value !== 'string' || !FIELD_VALUE.test(value)) {
      throw new ProtocolError(
        `websocket header \`${name}\` has a value that is not a valid HTTP header value`,
      );
    }
  }
}
