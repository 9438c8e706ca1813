/** Plain twin of src/server/fastpath/processWriteText.ts: every text through `parseInbound`. */
import { parseInbound, type InboundMessage } from '../../../../src/server/inboundMessage.js';

export function parseInboundText(text: string): InboundMessage {
  return parseInbound(text);
}

export function chunkBytes(chunk: string): Buffer {
  return Buffer.from(chunk, 'base64');
}

/** Nothing is remembered: `chunkBytes` decodes every chunk. */
export function keepChunkBytes(_chunk: string, _bytes: Buffer): void {}
