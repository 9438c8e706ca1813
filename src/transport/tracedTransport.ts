/**
 * W3C trace context on outgoing requests without touching the rpc layer: wraps a Transport so
 * that every JSON-RPC request it sends carries `"trace": {traceparent, tracestate?}` from
 * `current()` (called at send time, e.g. the active OpenTelemetry span); responses and
 * notifications pass unchanged. An invalid context is not sent. Guarded by spec/transport/tracedTransport.spec.ts.
 */
import { validTraceContext, type W3cTraceContext } from '../protocol/w3cTraceContext.js';
import type { Transport } from './transport.js';

/**
 * A request as JSON.stringify writes `{ id, method, params }` (the rpc layer's order): the
 * trace is appended as the last member without parsing the message (file blocks are large).
 * A message in any other shape passes unchanged.
 */
const REQUEST_HEAD = /^\{"id":(?:-?\d+|"(?:[^"\\]|\\.)*"),"method":"/;

/**
 * Wraps `transport` so that each request it sends carries `trace` from `current()`, read at send
 * time; responses and notifications pass unchanged, and an invalid context is left out.
 */
export function traceRequests(
  transport: Transport,
  current: () => W3cTraceContext | undefined,
): Transport {
  return {
    incoming$: transport.incoming$,
    send(message) {
      transport.send(withTrace(message, current));
    },
    close() {
      transport.close();
    },
    setPaused(paused) {
      transport.setPaused?.(paused);
    },
  };
}

function withTrace(message: string, current: () => W3cTraceContext | undefined): string {
  if (!REQUEST_HEAD.test(message) || !message.endsWith('}')) return message;
  const context = current();
  const valid = context === undefined ? undefined : validTraceContext(context);
  if (valid === undefined) return message;
  const trace = JSON.stringify({
    traceparent: valid.traceparent,
    ...(valid.tracestate === undefined ? {} : { tracestate: valid.tracestate }),
  });
  return `${message.slice(0, -1)},"trace":${trace}}`;
}
