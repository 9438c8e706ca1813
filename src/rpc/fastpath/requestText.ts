/**
 * The text of an outbound request, `JSON.stringify({ id, method, params })`, with one shortcut:
 * the params of a `process/write` made by `processWriteParams` carry a chunk this module
 * encoded itself, so it is standard base64 (no character JSON escapes) and the request is
 * written around it by concatenation instead of `JSON.stringify` copying the ~1.4 MB string
 * character by character. The params object is frozen and remembered in a WeakSet, so a chunk
 * that did not come from the encoder never takes the shortcut. processId and writeId still
 * go through `JSON.stringify`. spec/rpc/fastpath/requestText.spec.ts holds both exports to the
 * plain twin (bench/plain/rpc/fastpath/requestText.ts): byte-identical texts for any params.
 */
import { encodeBase64 } from '../../protocol/base64.js';

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
    return `{"id":${id},"method":"process/write","params":{"processId":${JSON.stringify(processId)},"chunk":"${chunk}","writeId":${JSON.stringify(writeId)}}}`;
  }
  return JSON.stringify({ id, method, params: params ?? null });
}

function isEncodedHere(params: unknown): params is ProcessWriteParams {
  return typeof params === 'object' && params !== null && ENCODED_HERE.has(params);
}
