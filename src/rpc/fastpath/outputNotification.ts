/**
 * `process/output`, the message a streaming client receives by the thousand, read without
 * `JSON.parse`: the message is matched against the one layout both executors write,
 * `{"method":"process/output","params":{"processId":"…","seq":N,"stream":"…","chunk":"…"}}`,
 * and the chunk is cut out of it and decoded here, once. A message still in UTF-8 bytes
 * (`Transport.incomingUtf8$`) is read from the bytes: only the chunk becomes a string, and
 * the whole text is never decoded.
 *
 * Contract: `parseOutputNotification(text)` returns undefined, or the notification
 * `JSON.parse` and `classifyMessage` read from `text` (the plain twin,
 * bench/plain/rpc/fastpath/outputNotification.ts); `parseOutputNotificationUtf8(bytes)` the
 * same for the text that valid UTF-8 `bytes` hold. When one is returned, its params carry the
 * chunk's bytes (`decodedChunkOf`), and the chunk is canonical standard base64, so those bytes
 * are what decoding the chunk gives. Every message in that layout whose processId needs no
 * escaping (and is at most 256 characters, from bytes at most 256 bytes) and whose chunk is
 * canonical base64 is recognised. The caller parses whatever is not recognised the plain way.
 * spec/rpc/fastpath/outputNotification.spec.ts holds both to the twin.
 * What it earns: docs/performance.md ("Plain stdout throughput (session 8)", "CLI receive
 * path (session 9)", `npx tsx bench/fast-paths-output.ts`).
 */
import type { JsonRpcNotification } from '../../protocol/jsonrpc.js';
import { decodeCanonicalBase64, decodedBase64Length } from '../../protocol/base64.js';
import { platform } from '../../platform/index.js';

const HEAD = '{"method":"process/output","params":{"processId":"';
const SEQ = '","seq":';
const STREAM = ',"stream":"';
const CHUNK = '","chunk":"';
const TAIL = '"}}';
const STREAMS = ['stdout', 'stderr', 'pty'] as const;
type Stream = (typeof STREAMS)[number];
/** Longer process ids go the plain way (their check is a loop over each character). */
const MAX_PROCESS_ID_CHARS = 256;
/** Up to 15 digits a JSON number is an exact integer. */
const MAX_SEQ_DIGITS = 15;
/** Everything before the chunk, at its longest. */
const MAX_HEAD_CHARS =
  HEAD.length +
  MAX_PROCESS_ID_CHARS +
  SEQ.length +
  MAX_SEQ_DIGITS +
  STREAM.length +
  'stdout'.length +
  CHUNK.length;
const HEAD_BYTES = platform.utf8Encode(HEAD);
const TAIL_BYTES = platform.utf8Encode(TAIL);
const BASE64_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';

const DECODED_CHUNK = Symbol('decoded chunk');

/** The bytes of the chunk of params made by `parseOutputNotification`, else undefined. */
export function decodedChunkOf(params: unknown): Uint8Array | undefined {
  if (typeof params !== 'object' || params === null) return undefined;
  return (params as { [DECODED_CHUNK]?: Uint8Array })[DECODED_CHUNK];
}

/** The notification in `text` when it is a `process/output` in the executors' layout. */
export function parseOutputNotification(text: string): JsonRpcNotification | undefined {
  const head = matchHead(text);
  if (head === undefined || !text.endsWith(TAIL)) return undefined;
  const chunkEnd = text.length - TAIL.length;
  if (chunkEnd < head.chunkStart) return undefined;
  const chunk = text.slice(head.chunkStart, chunkEnd);
  // Canonical base64 holds no quote, backslash or control character: the string JSON.parse
  // would read is the slice itself, and the text ends right after it.
  const bytes = decodeCanonicalBase64(chunk);
  if (bytes === undefined) return undefined;
  return notification(text.slice(head.idStart, head.idEnd), head, chunk, bytes);
}

/** As `parseOutputNotification`, for the text held by `utf8`, valid UTF-8. */
export function parseOutputNotificationUtf8(utf8: Uint8Array): JsonRpcNotification | undefined {
  const length = utf8.length;
  if (length < HEAD_BYTES.length + TAIL_BYTES.length) return undefined;
  for (let index = 0; index < HEAD_BYTES.length; index += 1)
    if (utf8[index] !== HEAD_BYTES[index]) return undefined;
  for (let index = 1; index <= TAIL_BYTES.length; index += 1)
    if (utf8[length - index] !== TAIL_BYTES[TAIL_BYTES.length - index]) return undefined;
  // Latin-1 gives one character per byte, so offsets in the head are byte offsets. Bytes of
  // a multi-byte character are all >= 0x80: they match no delimiter and pass the escape check.
  const chunkEnd = length - TAIL_BYTES.length;
  const head = matchHead(
    platform.latin1Decode(utf8.subarray(0, Math.min(chunkEnd, MAX_HEAD_CHARS))),
  );
  if (head === undefined) return undefined;
  const chunk = platform.latin1Decode(utf8.subarray(head.chunkStart, chunkEnd));
  const bytes = decodeCanonicalLatin1Base64(chunk);
  if (bytes === undefined) return undefined;
  // The id lies between ASCII quotes of valid UTF-8, so its bytes are valid UTF-8 too.
  const processId = platform.utf8Decode(utf8.subarray(head.idStart, head.idEnd));
  return notification(processId, head, chunk, bytes);
}

interface Head {
  readonly idStart: number;
  readonly idEnd: number;
  readonly seq: number;
  readonly stream: Stream;
  /** Where the chunk's characters start (right after its opening quote). */
  readonly chunkStart: number;
}

/** Everything up to the chunk, read from its start; nothing after `chunkStart` is looked at. */
function matchHead(text: string): Head | undefined {
  if (!text.startsWith(HEAD)) return undefined;
  const idStart = HEAD.length;
  const idEnd = text.indexOf('"', idStart);
  if (idEnd < 0 || idEnd - idStart > MAX_PROCESS_ID_CHARS || !needsNoEscape(text, idStart, idEnd))
    return undefined;
  if (!text.startsWith(SEQ, idEnd)) return undefined;
  const seqStart = idEnd + SEQ.length;
  let seqEnd = seqStart;
  while (seqEnd - seqStart <= MAX_SEQ_DIGITS && isDigit(text.charCodeAt(seqEnd))) seqEnd += 1;
  const digits = seqEnd - seqStart;
  if (digits === 0 || digits > MAX_SEQ_DIGITS) return undefined;
  if (digits > 1 && text.charCodeAt(seqStart) === 0x30) return undefined; // no leading zero in JSON
  if (!text.startsWith(STREAM, seqEnd)) return undefined;
  const streamStart = seqEnd + STREAM.length;
  const stream = STREAMS.find(
    (name) =>
      text.startsWith(name, streamStart) && text.startsWith(CHUNK, streamStart + name.length),
  );
  if (stream === undefined) return undefined;
  const seq = Number(text.slice(seqStart, seqEnd));
  return { idStart, idEnd, seq, stream, chunkStart: streamStart + stream.length + CHUNK.length };
}

function notification(
  processId: string,
  head: Head,
  chunk: string,
  bytes: Uint8Array,
): JsonRpcNotification {
  const params = { processId, seq: head.seq, stream: head.stream, chunk };
  Object.defineProperty(params, DECODED_CHUNK, { value: bytes });
  return { method: 'process/output', params };
}

/**
 * The bytes of `chunk`, a Latin-1 string (every character below U+0100), when it is canonical
 * standard base64, else undefined; the same answer as `decodeCanonicalBase64` without
 * encoding the bytes again. The platform decoder skips (Node) or refuses (browsers) every
 * character outside the alphabet and stops at a `=`, so a full-length result proves every
 * character but `-` and `_` (which Node reads as url-safe base64) and the padding; what is
 * left is that the padding's bits are zero. (A character above U+00FF would not be proven:
 * Node reads only its low byte.)
 */
function decodeCanonicalLatin1Base64(chunk: string): Uint8Array | undefined {
  let bytes: Uint8Array;
  try {
    bytes = platform.base64Decode(chunk);
  } catch {
    return undefined; // a decoder that throws on bad input (browsers)
  }
  // Not a whole number when the length is not a multiple of 4.
  if (bytes.length !== decodedBase64Length(chunk)) return undefined;
  if (chunk.includes('-') || chunk.includes('_')) return undefined;
  const padding = chunk.endsWith('==') ? 2 : chunk.endsWith('=') ? 1 : 0;
  if (padding > 0) {
    const last = BASE64_ALPHABET.indexOf(chunk.charAt(chunk.length - padding - 1));
    if ((last & (padding === 2 ? 0x0f : 0x03)) !== 0) return undefined;
  }
  return bytes;
}

function isDigit(code: number): boolean {
  return code >= 0x30 && code <= 0x39;
}

/** No backslash and no control character in `text[start, end)` (no quote: `end` is the first). */
function needsNoEscape(text: string, start: number, end: number): boolean {
  for (let index = start; index < end; index += 1) {
    const code = text.charCodeAt(index);
    if (code < 0x20 || code === 0x5c) return false;
  }
  return true;
}
