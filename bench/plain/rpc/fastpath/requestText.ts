/** Plain twin of src/rpc/fastpath/requestText.ts: a plain params object and `JSON.stringify`. */
import { encodeBase64 } from '../../../../src/protocol/base64.js';

export interface ProcessWriteParams {
  readonly processId: string;
  readonly chunk: string;
  readonly writeId: string;
}

export function processWriteParams(
  processId: string,
  data: Uint8Array | string,
  writeId: string,
): ProcessWriteParams {
  return { processId, chunk: encodeBase64(data), writeId };
}

export function requestText(id: number, method: string, params: unknown): string {
  return JSON.stringify({ id, method, params: params ?? null });
}
