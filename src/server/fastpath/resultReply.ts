/**
 * The text of a result reply: `JSON.stringify({ id, result })`, with a `PreformattedJson`
 * result's text made by hand (preformattedJson.ts, filesystem.ts `FileMetadata`).
 * spec/server/fastpath/resultReply.spec.ts holds it to the plain twin
 * (bench/plain/server/fastpath/resultReply.ts).
 */
import type { RequestId } from '../../protocol/jsonrpc.js';
import { PreformattedJson } from '../preformattedJson.js';

export function resultReplyText(id: RequestId, result: unknown): string {
  if (!(result instanceof PreformattedJson)) return JSON.stringify({ id, result });
  // A numeric id is an integer, which a template writes as JSON.stringify does.
  const idText = typeof id === 'number' ? `${id}` : JSON.stringify(id);
  return `{"id":${idText},"result":${result.jsonText()}}`;
}
