/**
 * The text of an outbound request, `JSON.stringify({ id, method, params })`, with one shortcut:
 * the params of a `process/write` made by `processWriteParams` carry a chunk this module
 * encoded itself, so it is standard base64 (no character JSON escapes) and the request is
 * written around it instead of `JSON.stringify` copying the ~1.4 MB string character by
 * character. The pieces are laid into one buffer and read back as one flat string when they
 * are all ASCII (base64 is): the socket's UTF-8 encoding of a concatenated (rope) string first
 * flattens it, slower than these two copies. The params object is frozen and remembered in a WeakSet, so a chunk
 * that did not come from the encoder never takes the shortcut. processId and writeId still
 * go through `JSON.stringify`. spec/rpc/fastpath/requestText.spec.ts holds both exports to the
 * plain twin (bench/plain/rpc/fastpath/requestText.ts): byte-identical texts for any params.
 */
import { encodeBase64 } from '../../protocol/base64.js';
import { platform } from '../../platform/index.js';

/** Params of a `process/write` (spec §6.4): the chunk is standard padded base64. */
export interface ProcessWriteParams {
  readonly processId: string;
  readonly chunk: string;
  readonly writeId: string;
}

/** Params objects built below: their chunk is exactly what `encodeBase64` returned. */
const ENCODED_HERE = new WeakSet<object>();

/** The params of a `process/write` of `data` (bytes, or text sent as UTF-8). */
export function processWriteParams(
  processId: string,
  data: Uint8Array | string,
  writeId: string,
): ProcessWriteParams {
  const params = Object.freeze({ processId, chunk: encodeBase64(data), writeId });
  ENCODED_HERE.add(params);
  return params;
}

/** `JSON.stringify({ id, method, params: params ?? null })`. */
export function requestText(id: number, method: string, params: unknown): string {
  if (method === 'process/write' && isEncodedHere(params)) {
    const { processId, chunk, writeId } = params;
    const head = `{"id":${id},"method":"process/write","params":{"processId":${JSON.stringify(processId)},"chunk":"`;
    const tail = `","writeId":${JSON.stringify(writeId)}}}`;
    return ascii(head) && ascii(tail) ? flatText(head, chunk, tail) : head + chunk + tail;
  }
  return JSON.stringify({ id, method, params: params ?? null });
}

function isEncodedHere(params: unknown): params is ProcessWriteParams {
  return typeof params === 'object' && params !== null && ENCODED_HERE.has(params);
}

/** Whether every character of a short `text` is ASCII (one UTF-8 byte each). */
function ascii(text: string): boolean {
  for (let index = 0; index < text.length; index += 1) {
    if (text.charCodeAt(index) > 0x7f) return false;
  }
  return true;
}

/** `head + chunk + tail` as one flat string; every character is ASCII. */
function flatText(head: string, chunk: string, tail: string): string {
  const bytes = new Uint8Array(head.length + chunk.length + tail.length);
  platform.utf8EncodeInto(head, bytes, 0);
  platform.utf8EncodeInto(chunk, bytes, head.length);
  platform.utf8EncodeInto(tail, bytes, head.length + chunk.length);
  return platform.asciiDecode(bytes);
}
