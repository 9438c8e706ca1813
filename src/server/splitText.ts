/**
 * An outbound JSON text handed over in pieces, for the one message that is both large and
 * frequent: `process/output`, whose base64 chunk is most of the text. Joining the pieces
 * would copy the chunk into a new string, and encoding that as UTF-8 would scan it again; a
 * transport that takes the pieces copies the chunk once, byte for byte.
 */
import type { Transport } from '../transport/transport.js';

/** The text `head + ascii + tail`, where `ascii` holds only ASCII characters. */
export interface SplitText {
  readonly head: string;
  readonly ascii: string;
  readonly tail: string;
}

/** A transport that also takes texts in pieces. */
export interface SplitTextTransport extends Transport {
  /** Like `send(head + ascii + tail)`. */
  sendSplit(text: SplitText): void;
}

export function acceptsSplitText(transport: Transport): transport is SplitTextTransport {
  return typeof (transport as Partial<SplitTextTransport>).sendSplit === 'function';
}
