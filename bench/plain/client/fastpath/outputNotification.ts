/**
 * Plain twin of src/client/fastpath/outputNotification.ts: the table's schema check (with the
 * alphabet regex on the chunk), then the base64 decode.
 */
import { decodeValidatedBase64 } from '../../../../src/protocol/base64.js';
import type { JsonRpcNotification } from '../../../../src/protocol/jsonrpc.js';
import type { ProcessOutputEvent } from '../../../../src/client/processEvents.js';
import { decodeNotification } from '../../../../src/client/wireDecode.js';

export interface DecodedOutput {
  readonly processId: string;
  readonly event: ProcessOutputEvent;
}

export function decodeOutputNotification(notification: JsonRpcNotification): DecodedOutput {
  const { processId, seq, stream, chunk } = decodeNotification('process/output', notification);
  return {
    processId,
    event: { type: 'output', seq, stream, chunk: decodeValidatedBase64(chunk) },
  };
}
