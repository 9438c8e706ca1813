import { concatBytes } from '../platform/bytes.js';
import { platform, type WebSocketData } from '../platform/index.js';

/**
 * The JSON text of one inbound WebSocket message (spec/protocol.md §1.1: Text frames, or
 * Binary frames holding UTF-8), or undefined when a Binary message is not valid UTF-8.
 */
export function webSocketMessageText(data: WebSocketData, isBinary: boolean): string | undefined {
  if (typeof data === 'string') return data; // a browser's Text frame, already decoded
  const bytes = Array.isArray(data)
    ? concatBytes(...data)
    : data instanceof ArrayBuffer
      ? new Uint8Array(data)
      : data;
  // `ws` and browsers have validated Text frames as UTF-8.
  if (!isBinary) return platform.utf8Decode(bytes);
  return platform.utf8DecodeStrict(bytes);
}
