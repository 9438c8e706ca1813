/**
 * The JSON-RPC envelope of the Codex dialect (spec/protocol.md §2): no `jsonrpc` member is
 * ever sent (it is tolerated on input), ids are integers or strings, no batches.
 */
import * as z from 'zod';

/**
 * A JSON-RPC request id: an integer or a string (the client sends integers from 1; `-1` answers
 * malformed input).
 */
export const RequestId = z.union([z.number().int(), z.string()]);
export type RequestId = z.infer<typeof RequestId>;

/** W3C trace context a request may carry as `trace` (spec §2.1); both members optional. */
export const TraceContext = z.object({
  traceparent: z.string().optional(),
  tracestate: z.string().optional(),
});

/** A request: `id` and `method`; `params` and `trace` optional. No `jsonrpc` member is sent. */
export const JsonRpcRequest = z.object({
  id: RequestId,
  method: z.string(),
  params: z.unknown().optional(),
  trace: z.unknown().optional(),
});
export type JsonRpcRequest = z.infer<typeof JsonRpcRequest>;

/** A notification: `method` without `id`; `params` and `trace` optional. */
export const JsonRpcNotification = z.object({
  method: z.string(),
  params: z.unknown().optional(),
  trace: z.unknown().optional(),
});
export type JsonRpcNotification = z.infer<typeof JsonRpcNotification>;

/** A success response: the request's `id` and any `result`. */
export const JsonRpcResponse = z.object({
  id: RequestId,
  result: z.unknown(),
});
export type JsonRpcResponse = z.infer<typeof JsonRpcResponse>;

/**
 * The `error` member of an error response: integer `code`, `message`, optional `data` (codes in
 * `ErrorCode`).
 */
export const JsonRpcErrorObject = z.object({
  code: z.number().int(),
  message: z.string(),
  data: z.unknown().optional(),
});
export type JsonRpcErrorObject = z.infer<typeof JsonRpcErrorObject>;

/** An error response: the request's `id` (or `-1` for malformed input) and an `error` object. */
export const JsonRpcError = z.object({
  id: RequestId,
  error: JsonRpcErrorObject,
});
export type JsonRpcError = z.infer<typeof JsonRpcError>;

/** One inbound message after `classifyMessage`, tagged with its `kind`. */
export type JsonRpcMessage =
  | ({ kind: 'request' } & JsonRpcRequest)
  | ({ kind: 'notification' } & JsonRpcNotification)
  | ({ kind: 'response' } & JsonRpcResponse)
  | ({ kind: 'error' } & JsonRpcError);

/**
 * Classifies one parsed JSON value the way the executor does (§2.3): `method`+`id` is a
 * request, `method` alone a notification, `result` a response, otherwise an error. Returns
 * `undefined` when the value fits none of the shapes (arrays included: no batches).
 */
export function classifyMessage(value: unknown): JsonRpcMessage | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  const record = value as Record<string, unknown>;
  if ('method' in record) {
    if ('id' in record) {
      const parsed = JsonRpcRequest.safeParse(record);
      return parsed.success ? { kind: 'request', ...parsed.data } : undefined;
    }
    const parsed = JsonRpcNotification.safeParse(record);
    return parsed.success ? { kind: 'notification', ...parsed.data } : undefined;
  }
  if ('result' in record) {
    const parsed = JsonRpcResponse.safeParse(record);
    return parsed.success ? { kind: 'response', ...parsed.data } : undefined;
  }
  const parsed = JsonRpcError.safeParse(record);
  return parsed.success ? { kind: 'error', ...parsed.data } : undefined;
}

/** Serializes an outbound message without the `kind` tag and without a `jsonrpc` member. */
export function encodeMessage(message: JsonRpcMessage): string {
  const { kind: _kind, ...wire } = message;
  return JSON.stringify(wire);
}
