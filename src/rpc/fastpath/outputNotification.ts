/**
 * `process/output`, the message a streaming client receives by the thousand, read without
 * `JSON.parse`: the text is matched against the one layout both executors write,
 * `{"method":"process/output","params":{"processId":"…","seq":N,"stream":"…","chunk":"…"}}`,
 * and the chunk is cut out of it (a slice, not a copy) and decoded here, once.
 *
 * Contract: `parseOutputNotification(text)` returns undefined, or the notification
 * `JSON.parse` and `classifyMessage` read from `text` (the plain twin,
 * bench/plain/rpc/fastpath/outputNotification.ts); when it returns one, its params carry the
 * chunk's bytes (`decodedChunkOf`), and the chunk is canonical standard base64, so those bytes
 * are what decoding the chunk gives. Every text in that layout whose processId needs no
 * escaping and whose chunk is canonical base64 is recognised. The caller parses whatever is not
 * recognised the plain way. spec/rpc/fastpath/outputNotification.spec.ts holds it to the twin.
 * What it earns: docs/performance.md ("Plain stdout throughput (session 8)",
 * `npx tsx bench/fast-paths-output.ts`).
 */
import type { JsonRpcNotification } from '../../protocol/jsonrpc.js';
import { decodeCanonicalBase64 } from '../../protocol/base64.js';

const HEAD = '{"method":"process/output","params":{"processId":"';
const SEQ = '","seq":';
const STREAM = ',"stream":"';
const CHUNK = '","chunk":"';
const TAIL = '"}}';
const STREAMS = ['stdout', 'stderr', 'pty'] as const;
/** Longer process ids go the plain way (their check is a loop over each character). */
const MAX_PROCESS_ID_CHARS = 256;
/** Up to 15 digits a JSON number is an exact integer. */
const MAX_SEQ_DIGITS = 15;

const DECODED_CHUNK = Symbol('decoded chunk');

/** The bytes of the chunk of params made by `parseOutputNotification`, else undefined. */
export function decodedChunkOf(params: unknown): Uint8Array | undefined {
  if (typeof params !== 'object' || params === null) return undefined;
  return (params as { [DECODED_CHUNK]?: Uint8Array })[DECODED_CHUNK];
}

/** The notification in `text` when it is a `process/output` in the executors' layout. */
export function parseOutputNotification(text: string): JsonRpcNotification | undefined {
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
  const chunkStart = streamStart + stream.length + CHUNK.length;
  const chunkEnd = text.length - TAIL.length;
  if (chunkEnd < chunkStart || !text.endsWith(TAIL)) return undefined;
  const chunk = text.slice(chunkStart, chunkEnd);
  // Canonical base64 holds no quote, backslash or control character: the string JSON.parse
  // would read is the slice itself, and the text ends right after it.
  const bytes = decodeCanonicalBase64(chunk);
  if (bytes === undefined) return undefined;
  const params = {
    processId: text.slice(idStart, idEnd),
    seq: Number(text.slice(seqStart, seqEnd)),
    stream,
    chunk,
  };
  Object.defineProperty(params, DECODED_CHUNK, { value: bytes });
  return { method: 'process/output', params };
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
