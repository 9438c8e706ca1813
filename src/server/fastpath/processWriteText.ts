/**
 * Reads an inbound text as `parseInbound` (inboundMessage.ts) does, with one shortcut: a
 * `process/write` request in the layout clients write —
 * `{"id":<integer>,"method":"process/write","params":{"processId":"…","chunk":"…","writeId":"…"}}`,
 * no whitespace, no escapes — is read by slicing, without `JSON.parse` copying its ~1.4 MB
 * base64 chunk and without the duplicate-key scan. The chunk is taken only when its decoded
 * length is the one its length and padding promise: Node's decoder skips or stops at any
 * character outside its alphabets, control characters and backslashes included, so then no
 * character of the slice is one JSON escapes and the slice is exactly the string `JSON.parse`
 * would give; its bytes go to the handler through `chunkBytes`. Anything else — another layout,
 * key order, extra keys, escapes, a fraction or huge id — goes to `parseInbound`, which keeps
 * the serde-worded errors. spec/server/fastpath/processWriteText.spec.ts holds it to the plain
 * twin (bench/plain/server/fastpath/processWriteText.ts, `parseInbound` alone).
 */
import { parseInbound, type InboundMessage } from '../inboundMessage.js';

const HEAD = '{"id":';
const METHOD = ',"method":"process/write","params":{"processId":"';
const CHUNK = '","chunk":"';
const WRITE_ID = '","writeId":"';
const TAIL = '"}}';
/** Longest id read here: 15 digits stay below 2^53. */
const MAX_ID_DIGITS = 15;

export function parseInboundText(text: string): InboundMessage {
  return processWrite(text) ?? parseInbound(text);
}

function processWrite(text: string): InboundMessage | undefined {
  if (!text.startsWith(HEAD)) return undefined;
  const idEnd = text.indexOf(',', HEAD.length);
  if (idEnd === -1 || !text.startsWith(METHOD, idEnd)) return undefined;
  const id = integerId(text, HEAD.length, idEnd);
  if (id === undefined) return undefined;
  const processIdStart = idEnd + METHOD.length;
  const processIdEnd = text.indexOf('"', processIdStart);
  if (processIdEnd === -1 || !text.startsWith(CHUNK, processIdEnd)) return undefined;
  const chunkStart = processIdEnd + CHUNK.length;
  const chunkEnd = text.indexOf('"', chunkStart);
  if (chunkEnd === -1 || !text.startsWith(WRITE_ID, chunkEnd)) return undefined;
  const writeIdStart = chunkEnd + WRITE_ID.length;
  const writeIdEnd = text.length - TAIL.length;
  if (writeIdEnd < writeIdStart || text.indexOf('"', writeIdStart) !== writeIdEnd) return undefined;
  if (!text.endsWith(TAIL)) return undefined;
  const processId = text.slice(processIdStart, processIdEnd);
  const chunk = text.slice(chunkStart, chunkEnd);
  const writeId = text.slice(writeIdStart, writeIdEnd);
  if (!plainString(processId) || !plainString(writeId)) return undefined;
  const bytes = decodedBase64(chunk);
  if (bytes === undefined) return undefined;
  keepChunkBytes(chunk, bytes);
  return { kind: 'request', id, method: 'process/write', params: { processId, chunk, writeId } };
}

/** A JSON integer without sign, fraction or exponent, short enough to be exact. */
function integerId(text: string, start: number, end: number): number | undefined {
  const digits = end - start;
  if (digits < 1 || digits > MAX_ID_DIGITS) return undefined;
  if (digits > 1 && text.charCodeAt(start) === 0x30) return undefined; // leading zero
  for (let index = start; index < end; index += 1) {
    const char = text.charCodeAt(index);
    if (char < 0x30 || char > 0x39) return undefined;
  }
  return Number(text.slice(start, end));
}

/** No character a JSON string must escape (the quotes were found by `indexOf`). */
function plainString(value: string): boolean {
  for (let index = 0; index < value.length; index += 1) {
    const char = value.charCodeAt(index);
    if (char < 0x20 || char === 0x5c) return false;
  }
  return true;
}

/**
 * The bytes of a padded base64 chunk, checked by decoding: a character outside the alphabets
 * (or `=` before the end) makes Node's decoder return fewer bytes than the length promises.
 */
function decodedBase64(chunk: string): Buffer | undefined {
  if (chunk.length % 4 !== 0) return undefined;
  const padding = chunk.endsWith('==') ? 2 : chunk.endsWith('=') ? 1 : 0;
  const bytes = Buffer.from(chunk, 'base64');
  return bytes.length === (chunk.length / 4) * 3 - padding ? bytes : undefined;
}

/** The chunk read last and its bytes, until `chunkBytes` hands them out (once). */
let lastDecoded: { chunk: string; bytes: Buffer } | undefined;

/**
 * Remembers `bytes`, which must be `Buffer.from(chunk, 'base64')`, for `chunkBytes` (also called
 * by processWriteFrame.ts, which decodes the chunk from the message's bytes).
 */
export function keepChunkBytes(chunk: string, bytes: Buffer): void {
  lastDecoded = { chunk, bytes };
}

/**
 * `Buffer.from(chunk, 'base64')`, the bytes a `process/write` hands to the child: those decoded
 * while reading the message when `chunk` is the one read last (the handler runs in the same
 * turn), so a chunk is decoded once. The bytes depend on the string's contents only.
 */
export function chunkBytes(chunk: string): Buffer {
  const last = lastDecoded;
  lastDecoded = undefined;
  return last !== undefined && last.chunk === chunk ? last.bytes : Buffer.from(chunk, 'base64');
}
