/** Plain twin of src/rpc/fastpath/plainResponse.ts: the message as `classifyMessage` sees it. */
import { classifyMessage } from '../../../../src/protocol/jsonrpc.js';

export function plainResponse(value: unknown): { id: number; result: unknown } | undefined {
  const message = classifyMessage(value);
  if (message?.kind !== 'response' || typeof message.id !== 'number') return undefined;
  return { id: message.id, result: message.result };
}
