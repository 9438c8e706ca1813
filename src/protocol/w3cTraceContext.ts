/**
 * W3C Trace Context (https://www.w3.org/TR/trace-context/) for the optional `trace` member of
 * requests (spec/protocol.md §2): `traceparent` is `00-<32 hex trace id>-<16 hex parent id>-<2
 * hex flags>` (ids not all zero), `tracestate` at most 32 `key=value` members in 512 chars.
 * Guarded by spec/protocol/w3cTraceContext.spec.ts.
 */

export interface W3cTraceContext {
  readonly traceparent: string;
  readonly tracestate?: string;
}

/** The parts of a valid `traceparent`. */
export interface TraceParent {
  readonly traceId: string;
  readonly parentId: string;
  readonly sampled: boolean;
}

const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;
const MAX_TRACESTATE_MEMBERS = 32;
const MAX_TRACESTATE_CHARS = 512;
const TRACESTATE_MEMBER =
  /^[a-z0-9][a-z0-9_\-*/@]{0,255}=[\x20-\x2b\x2d-\x3c\x3e-\x7e]{0,255}[\x21-\x2b\x2d-\x3c\x3e-\x7e]$/;

/** The parts of `traceparent`, or undefined when it is not a valid version-00 value. */
export function parseTraceParent(traceparent: string): TraceParent | undefined {
  const match = TRACEPARENT.exec(traceparent.trim());
  if (match === null) return undefined;
  const [, traceId, parentId, flags] = match as unknown as [string, string, string, string];
  if (/^0+$/.test(traceId) || /^0+$/.test(parentId)) return undefined;
  return { traceId, parentId, sampled: (parseInt(flags, 16) & 1) === 1 };
}

/** True when `tracestate` is a valid list (empty members are allowed and ignored). */
export function isValidTraceState(tracestate: string): boolean {
  if (tracestate.length > MAX_TRACESTATE_CHARS) return false;
  const members = tracestate
    .split(',')
    .map((member) => member.trim())
    .filter((member) => member !== '');
  return (
    members.length <= MAX_TRACESTATE_MEMBERS && members.every((m) => TRACESTATE_MEMBER.test(m))
  );
}

/**
 * `context` if it is valid; a context whose `tracestate` alone is invalid keeps its
 * `traceparent` (as the standard asks); an invalid `traceparent` gives undefined.
 */
export function validTraceContext(context: W3cTraceContext): W3cTraceContext | undefined {
  if (parseTraceParent(context.traceparent) === undefined) return undefined;
  if (context.tracestate === undefined || isValidTraceState(context.tracestate)) return context;
  return { traceparent: context.traceparent };
}

/** A new root context (random ids), sampled unless told otherwise. */
export function newTraceContext(sampled = true): W3cTraceContext {
  return { traceparent: formatTraceParent(randomId(16), randomId(8), sampled) };
}

/** A child span of `parent`: same trace id, flags and tracestate, a new parent id. */
export function childTraceContext(parent: W3cTraceContext): W3cTraceContext {
  const parts = parseTraceParent(parent.traceparent);
  if (parts === undefined) throw new TypeError(`invalid traceparent \`${parent.traceparent}\``);
  return {
    traceparent: formatTraceParent(parts.traceId, randomId(8), parts.sampled),
    ...(parent.tracestate === undefined ? {} : { tracestate: parent.tracestate }),
  };
}

function formatTraceParent(traceId: string, parentId: string, sampled: boolean): string {
  return `00-${traceId}-${parentId}-${sampled ? '01' : '00'}`;
}

/** A random lowercase hex id of `bytes` bytes, never all zeros (invalid in W3C trace context). */
function randomId(bytes: number): string {
  const buffer = new Uint8Array(bytes);
  let id: string;
  do {
    globalThis.crypto.getRandomValues(buffer);
    id = Array.from(buffer, (byte) => byte.toString(16).padStart(2, '0')).join('');
  } while (/^0+$/.test(id));
  return id;
}
