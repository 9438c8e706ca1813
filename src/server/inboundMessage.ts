/**
 * Turns one inbound text into a JSON-RPC message the way the Rust executor does (spec §2.3),
 * or into the detail text of its malformed-input error: serde_json syntax errors, then the
 * shape errors observed on 0.169.0 (`missing field \`error\``, `expected a JSON-RPC object`,
 * `data did not match any variant of untagged enum RequestId`, …).
 */
import type { RequestId } from '../protocol/jsonrpc.js';
import { parseJson } from './jsonSyntax.js';
import { describeValue } from './params.js';

export type InboundMessage =
  | { kind: 'request'; id: RequestId; method: string; params: unknown }
  | { kind: 'notification'; method: string; params: unknown }
  | { kind: 'response'; id: RequestId }
  | { kind: 'error'; id: RequestId };

const BAD_ID = 'data did not match any variant of untagged enum RequestId';
const I64_MAX = 2n ** 63n - 1n;

function requestId(value: unknown): RequestId | undefined {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' && Number.isSafeInteger(value)) return value;
  if (
    typeof value === 'number' &&
    Number.isInteger(value) &&
    BigInt(value) <= I64_MAX &&
    BigInt(value) >= -I64_MAX - 1n
  ) {
    return value;
  }
  return undefined;
}

export function parseInbound(text: string): { message: InboundMessage } | { error: string } {
  const parsed = parseJson(text);
  if ('error' in parsed) return parsed;
  const { value } = parsed;
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    return { error: 'expected a JSON-RPC object' };
  const record = value as Record<string, unknown>;
  const id = requestId(record.id);
  if ('method' in record) {
    if (typeof record.method !== 'string') {
      return { error: `invalid type: ${describeValue(record.method)}, expected a string` };
    }
    if (!('id' in record))
      return { message: { kind: 'notification', method: record.method, params: record.params } };
    if (id === undefined) return { error: BAD_ID };
    return { message: { kind: 'request', id, method: record.method, params: record.params } };
  }
  if ('result' in record) {
    if (!('id' in record)) return { error: 'missing field `id`' };
    return id === undefined ? { error: BAD_ID } : { message: { kind: 'response', id } };
  }
  if (!('error' in record)) return { error: 'missing field `error`' };
  if (!('id' in record)) return { error: 'missing field `id`' };
  return id === undefined ? { error: BAD_ID } : { message: { kind: 'error', id } };
}
