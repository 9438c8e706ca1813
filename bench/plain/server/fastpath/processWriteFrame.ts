/**
 * Plain twin of src/server/fastpath/processWriteFrame.ts: the message's bytes decoded as a
 * whole, then read as a text.
 */
import type { InboundMessage } from '../../../../src/server/inboundMessage.js';
import { parseInboundText } from '../../../../src/server/fastpath/processWriteText.js';

export function parseInboundUtf8(utf8: Uint8Array): InboundMessage {
  return parseInboundText(Buffer.from(utf8.buffer, utf8.byteOffset, utf8.length).toString());
}
