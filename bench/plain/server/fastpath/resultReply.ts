/** Plain twin of src/server/fastpath/resultReply.ts: `JSON.stringify` of every reply. */
import type { RequestId } from '../../../../src/protocol/jsonrpc.js';

export function resultReplyText(id: RequestId, result: unknown): string {
  return JSON.stringify({ id, result });
}
