/**
 * Reads an inbound message that is still UTF-8 bytes (`Transport.incomingUtf8$`, a large Text
 * message of the WebSocket: webSocketFrameReader.ts) as `parseInboundText` reads its text,
 * without decoding the whole message: a `process/write` in the layout clients write —
 * `{"id":<integer>,"method":"process/write","params":{"processId":"…","chunk":"…","writeId":"…"}}`,
 * no whitespace, no escapes — is matched on the bytes, and its base64 chunk is decoded from
 * Latin-1 pieces of the bytes (each under `PIECE_BYTES`, so V8 keeps it on its heap: a string
 * from over ~1 MB of Latin-1 is external, and collecting those cost more than the decode saved).
 * The chunk is taken only when every piece decodes to the length its length and padding
 * promise: Node's decoder skips or stops at any byte outside its alphabets (`"`, `\`, control
 * characters, bytes of multi-byte characters, `=` before the end), so then the chunk's string,
 * the pieces joined, is exactly what `JSON.parse` gives; its bytes reach the child through
 * `chunkBytes` (processWriteText.ts). Anything else — another layout, escapes, odd ids, a
 * processId or writeId holding a backslash or control character — is decoded and goes to
 * `parseInboundText`, so the serde-worded errors are unchanged.
 * spec/server/fastpath/processWriteFrame.spec.ts holds it to the plain twin
 * (bench/plain/server/fastpath/processWriteFrame.ts: decode, then `parseInboundText`).
 */
import type { InboundMessage } from '../inboundMessage.js';
import { keepChunkBytes, parseInboundText } from './processWriteText.js';

const HEAD = Buffer.from('{"id":', 'latin1');
const METHOD = Buffer.from(',"method":"process/write","params":{"processId":"', 'latin1');
const CHUNK = Buffer.from('","chunk":"', 'latin1');
const WRITE_ID = Buffer.from('","writeId":"', 'latin1');
const TAIL = Buffer.from('"}}', 'latin1');
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const EQUALS = 0x3d;
/** Longest id read here: 15 digits stay below 2^53. */
const MAX_ID_DIGITS = 15;
/** Base64 characters per piece: a multiple of 4, its string well under V8's large-object size. */
const PIECE_BYTES = 64 * 1024;

/** The message `utf8` (valid UTF-8) holds, as `parseInboundText` reads its text. */
export function parseInboundUtf8(utf8: Uint8Array): InboundMessage {
  const bytes = Buffer.isBuffer(utf8)
    ? utf8
    : Buffer.from(utf8.buffer, utf8.byteOffset, utf8.length);
  return processWrite(bytes) ?? parseInboundText(bytes.toString());
}

function processWrite(bytes: Buffer): InboundMessage | undefined {
  if (!matches(bytes, HEAD, 0)) return undefined;
  const idEnd = bytes.indexOf(0x2c, HEAD.length); // ','
  if (idEnd === -1 || !matches(bytes, METHOD, idEnd)) return undefined;
  const id = integerId(bytes, HEAD.length, idEnd);
  if (id === undefined) return undefined;
  const processIdStart = idEnd + METHOD.length;
  const processIdEnd = bytes.indexOf(QUOTE, processIdStart);
  if (processIdEnd === -1 || !matches(bytes, CHUNK, processIdEnd)) return undefined;
  const chunkStart = processIdEnd + CHUNK.length;
  const chunkEnd = bytes.indexOf(QUOTE, chunkStart);
  if (chunkEnd === -1 || !matches(bytes, WRITE_ID, chunkEnd)) return undefined;
  const writeIdStart = chunkEnd + WRITE_ID.length;
  const writeIdEnd = bytes.length - TAIL.length;
  if (writeIdEnd < writeIdStart || bytes.indexOf(QUOTE, writeIdStart) !== writeIdEnd)
    return undefined;
  if (!matches(bytes, TAIL, writeIdEnd)) return undefined;
  if (!plainString(bytes, processIdStart, processIdEnd)) return undefined;
  if (!plainString(bytes, writeIdStart, writeIdEnd)) return undefined;
  const chunk = decodedChunk(bytes, chunkStart, chunkEnd);
  if (chunk === undefined) return undefined;
  keepChunkBytes(chunk.text, chunk.bytes);
  const processId = bytes.toString('utf8', processIdStart, processIdEnd);
  const writeId = bytes.toString('utf8', writeIdStart, writeIdEnd);
  return {
    kind: 'request',
    id,
    method: 'process/write',
    params: { processId, chunk: chunk.text, writeId },
  };
}

/** Whether `bytes` holds `expected` at `offset`. */
function matches(bytes: Buffer, expected: Buffer, offset: number): boolean {
  if (offset + expected.length > bytes.length) return false;
  for (let index = 0; index < expected.length; index += 1)
    if (bytes[offset + index] !== expected[index]) return false;
  return true;
}

/** A JSON integer without sign, fraction or exponent, short enough to be exact. */
function integerId(bytes: Buffer, start: number, end: number): number | undefined {
  const digits = end - start;
  if (digits < 1 || digits > MAX_ID_DIGITS) return undefined;
  if (digits > 1 && bytes[start] === 0x30) return undefined; // leading zero
  let id = 0;
  for (let index = start; index < end; index += 1) {
    const byte = bytes[index] as number;
    if (byte < 0x30 || byte > 0x39) return undefined;
    id = id * 10 + (byte - 0x30);
  }
  return id;
}

/**
 * No byte a JSON string must escape (the quotes were found by `indexOf`); bytes of multi-byte
 * characters are all >= 0x80.
 */
function plainString(bytes: Buffer, start: number, end: number): boolean {
  for (let index = start; index < end; index += 1) {
    const byte = bytes[index] as number;
    if (byte < 0x20 || byte === BACKSLASH) return false;
  }
  return true;
}

/**
 * The chunk's text and bytes when every piece decodes to the length it promises (see the top of
 * this file), else undefined.
 */
function decodedChunk(
  bytes: Buffer,
  start: number,
  end: number,
): { text: string; bytes: Buffer } | undefined {
  const length = end - start;
  if (length % 4 !== 0) return undefined;
  const padding = length === 0 || bytes[end - 1] !== EQUALS ? 0 : bytes[end - 2] === EQUALS ? 2 : 1;
  const decoded = Buffer.allocUnsafe((length / 4) * 3 - padding);
  let text = '';
  let written = 0;
  for (let from = start; from < end; from += PIECE_BYTES) {
    const to = Math.min(end, from + PIECE_BYTES);
    const piece = bytes.toString('latin1', from, to);
    const promised = ((to - from) / 4) * 3 - (to === end ? padding : 0);
    if (decoded.write(piece, written, 'base64') !== promised) return undefined;
    written += promised;
    text += piece;
  }
  return { text, bytes: decoded };
}
