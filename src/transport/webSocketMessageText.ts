import { TextDecoder } from 'node:util';
import type WebSocket from 'ws';

// Fatal: invalid UTF-8 throws instead of becoming U+FFFD. Shared: `decode` of a whole buffer
// (no `stream` option) keeps no state between calls.
let binaryDecoder: TextDecoder | undefined;

/**
 * The JSON text of one inbound WebSocket message (spec/protocol.md §1.1: Text frames, or
 * Binary frames holding UTF-8), or undefined when a Binary message is not valid UTF-8.
 */
export function webSocketMessageText(
  data: WebSocket.RawData,
  isBinary: boolean,
): string | undefined {
  const bytes = Buffer.isBuffer(data)
    ? data
    : Array.isArray(data)
      ? Buffer.concat(data)
      : Buffer.from(data);
  if (!isBinary) return bytes.toString('utf8'); // ws has validated Text frames as UTF-8
  binaryDecoder ??= new TextDecoder('utf-8', { fatal: true });
  try {
    return binaryDecoder.decode(bytes);
  } catch {
    return undefined;
  }
}
