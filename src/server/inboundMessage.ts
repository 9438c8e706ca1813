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
  | { kind: 'error'; id: RequestId }
  /** Not a JSON-RPC message; `detail` is the error text the executor answers with. */
  | { kind: 'malformed'; detail: string };

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

const malformed = (detail: string): InboundMessage => ({ kind: 'malformed', detail });

export function parseInbound(text: string): InboundMessage {
  const parsed = parseJson(text);
  if ('error' in parsed) return malformed(parsed.error);
  const { value } = parsed;
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    return malformed('expected a JSON-RPC object');
  const record = value as Record<string, unknown>;
  const { method } = record;
  const id = requestId(record.id);
  // The common case first: a request (a string method and a valid id are surely present).
  if (typeof method === 'string' && id !== undefined)
    return { kind: 'request', id, method, params: record.params };
  if ('method' in record) {
    if (typeof method !== 'string')
      return malformed(`invalid type: ${describeValue(method)}, expected a string`);
    if (!('id' in record)) return { kind: 'notification', method, params: record.params };
    return malformed(BAD_ID);
  }
  if ('result' in record) {
    if (!('id' in record)) return malformed('missing field `id`');
    return id === undefined ? malformed(BAD_ID) : { kind: 'response', id };
  }
  if (!('error' in record)) return malformed('missing field `error`');
  if (!('id' in record)) return malformed('missing field `id`');
  return id === undefined ? malformed(BAD_ID) : { kind: 'error', id };
}
