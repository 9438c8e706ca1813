import { concatBytes } from '../platform/bytes.js';
import { platform, type WebSocketData } from '../platform/index.js';

/**
 * The JSON text of one inbound WebSocket message (spec/protocol.md §1.1: Text frames, or
 * Binary frames holding UTF-8), or undefined when a Binary message is not valid UTF-8.
 */
export function webSocketMessageText(data: WebSocketData, isBinary: boolean): string | undefined {
  const message = webSocketMessage(data, isBinary);
  return typeof message === 'string' ? message : message && platform.utf8Decode(message);
}

/**
 * As `webSocketMessageText`, but a Text message that arrived as bytes stays bytes: its UTF-8
 * has been validated (by `ws`), so it decodes without loss (`Transport.incomingUtf8$`).
 */
export function webSocketMessage(
  data: WebSocketData,
  isBinary: boolean,
): string | Uint8Array | undefined {
  if (typeof data === 'string') return data; // a browser's Text frame, already decoded
  const bytes = Array.isArray(data)
    ? concatBytes(...data)
    : data instanceof ArrayBuffer
      ? new Uint8Array(data)
      : data;
  // `ws` and browsers have validated Text frames as UTF-8.
  if (!isBinary) return bytes;
  return platform.utf8DecodeStrict(bytes);
}
