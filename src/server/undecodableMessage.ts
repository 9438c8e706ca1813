/**
 * A message with no text form: a Binary WebSocket message that is not UTF-8. The binary parses
 * such bytes as JSON and answers the error like any other malformed message, connection kept;
 * a transport that can receive them reports the error detail of each one.
 */
import type { Transport } from '../transport/transport.js';

export interface UndecodableMessageTransport extends Transport {
  /**
   * Sets where the JSON error detail of each undecodable message goes (`invalid unicode code
   * point at line 1 column 21`), called in arrival order with the texts of `incoming$`.
   */
  onUndecodable(handler: (detail: string) => void): void;
}

export function reportsUndecodable(transport: Transport): transport is UndecodableMessageTransport {
  return typeof (transport as Partial<UndecodableMessageTransport>).onUndecodable === 'function';
}
