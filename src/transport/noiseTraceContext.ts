/**
 * Trace context in the clear (noise-relay.md §5.4): when the message being sent is a JSON-RPC
 * request carrying `trace`, its first data frame exposes `traceparent`/`tracestate` to the
 * relay; responses, notifications and later records carry none. The trace also stays inside
 * the encrypted JSON.
 */
import type { RelayTraceContext } from '../relay/index.js';

/** How far into a message its `id` and `method` keys are looked for. */
const REQUEST_HEAD_CHARS = 256;

/** The trace context of `message` when it is a request with a `trace` object, else undefined. */
export function requestTraceContext(message: string): RelayTraceContext | undefined {
  // Cheap pre-checks, because large messages (output chunks, file contents) pass through here:
  // a request names its id and method up front (every serializer we know writes them first),
  // and only then is the whole text searched for a trace.
  const head = message.slice(0, REQUEST_HEAD_CHARS);
  if (!head.includes('"method"') || !head.includes('"id"')) return undefined;
  if (!message.includes('"trace"')) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(message);
  } catch {
    return undefined;
  }
  if (typeof parsed !== 'object' || parsed === null) return undefined;
  const { id, method, trace } = parsed as { id?: unknown; method?: unknown; trace?: unknown };
  if (id === undefined || typeof method !== 'string') return undefined;
  if (typeof trace !== 'object' || trace === null) return undefined;
  const { traceparent, tracestate } = trace as { traceparent?: unknown; tracestate?: unknown };
  const context: { traceparent?: string; tracestate?: string } = {};
  if (typeof traceparent === 'string') context.traceparent = traceparent;
  if (typeof tracestate === 'string') context.tracestate = tracestate;
  return context.traceparent === undefined && context.tracestate === undefined
    ? undefined
    : context;
}
