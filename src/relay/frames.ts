/**
 * Relay frames (noise-relay.md §4): one protobuf `RelayMessageFrame` per binary WebSocket
 * message (schema: spec/relay/protobuf/proto/relay.proto). This module reads and writes them
 * with the wire primitives of protoWire.ts, turns them into a small typed union, checks codex's
 * validation rules on both encode and decode, and enforces the 256 KiB WebSocket message limit.
 * spec/relay/frames.spec.ts holds it to codex's vectors and to the generated reference codec.
 */
import {
  ProtoReader,
  ProtoWireError,
  ProtoWriter,
  WIRE_LENGTH_DELIMITED,
  WIRE_VARINT,
} from './protoWire.js';
import { RelayProtocolError } from './relayProtocolError.js';
import {
  MAX_RELAY_WEBSOCKET_MESSAGE_SIZE,
  NOISE_RELAY_RESET_REASON,
  RELAY_MESSAGE_FRAME_VERSION,
  type RelayDataFrame,
  type RelayFrame,
  type RelayFrameKind,
  type RelayHandshakeFrame,
  type RelayResetFrame,
  type RelayResumeFrame,
  type RelayTraceContext,
} from './frameTypes.js';

export * from './frameTypes.js';

const MAX_UINT32 = 0xffff_ffff;

export function dataFrame(
  streamId: string,
  seq: number,
  payload: Uint8Array,
  trace?: RelayTraceContext,
): RelayDataFrame {
  return { kind: 'data', streamId, seq, payload, ...traceFields(trace) };
}

export function handshakeFrame(streamId: string, payload: Uint8Array): RelayHandshakeFrame {
  return { kind: 'handshake', streamId, payload };
}

export function resumeFrame(streamId: string, nextSeq = 0): RelayResumeFrame {
  return { kind: 'resume', streamId, nextSeq };
}

export function resetFrame(streamId: string, reason = NOISE_RELAY_RESET_REASON): RelayResetFrame {
  return { kind: 'reset', streamId, reason };
}

/**
 * Encodes one frame exactly as codex does (proto3: zero fields omitted, the oneof body always
 * present, fields in number order). Throws `RelayProtocolError` for a frame codex would reject
 * or one larger than the WebSocket message limit.
 */
export function encodeRelayFrame(frame: RelayFrame): Uint8Array {
  validateRelayFrame(frame);
  if (frame.kind === 'data') {
    const { head, tail, length } = dataFrameEnvelope(
      frame.streamId,
      frame.seq,
      frame.payload.length,
      frame,
    );
    const out = new Uint8Array(length);
    out.set(head, 0);
    out.set(frame.payload, head.length);
    out.set(tail, head.length + frame.payload.length);
    return out;
  }
  const writer = new ProtoWriter()
    .uint32(FIELD_VERSION, RELAY_MESSAGE_FRAME_VERSION)
    .string(FIELD_STREAM_ID, frame.streamId)
    .bytes(BODY_FIELD[frame.kind], bodyBytes(frame));
  const bytes = withTraceFields(writer, frame).finish();
  checkSize(bytes.length);
  return bytes;
}

/** The bytes of a data frame before and after its payload, and the frame's whole length. */
export interface DataFrameEnvelope {
  readonly head: Uint8Array;
  readonly tail: Uint8Array;
  readonly length: number;
}

/**
 * A data frame as `head ‖ payload ‖ tail`: for any payload of `payloadLength` bytes these are the
 * bytes `encodeRelayFrame(dataFrame(streamId, seq, payload, trace))` puts around it, so a sender
 * can seal a record straight into the frame's buffer behind `head` (spec/relay/frames.spec.ts).
 * Throws the `RelayProtocolError` that `encodeRelayFrame` throws for such a frame.
 */
export function dataFrameEnvelope(
  streamId: string,
  seq: number,
  payloadLength: number,
  trace?: RelayTraceContext,
): DataFrameEnvelope {
  if (streamId.trim() === '') {
    throw new RelayProtocolError('relay message frame is missing stream_id');
  }
  if (!Number.isInteger(payloadLength) || payloadLength < 1) {
    throw new RelayProtocolError('relay data message frame is missing required fields');
  }
  checkUint32(seq, 'data seq');
  checkSize(payloadLength);
  // The data body's fields up to its payload (the caller places the payload after them).
  const bodyHead = (writer: ProtoWriter): ProtoWriter =>
    writer.uint32(1, seq).uint32(2, 0).uint32(3, 1).prefix(4, payloadLength);
  const head = bodyHead(
    new ProtoWriter()
      .uint32(FIELD_VERSION, RELAY_MESSAGE_FRAME_VERSION)
      .string(FIELD_STREAM_ID, streamId)
      .prefix(BODY_FIELD.data, bodyHead(new ProtoWriter()).length + payloadLength),
  ).finish();
  const tail = withTraceFields(new ProtoWriter(), trace ?? {}).finish();
  const length = head.length + payloadLength + tail.length;
  checkSize(length);
  return { head, tail, length };
}

/**
 * Decodes and validates one binary WebSocket message. Throws `RelayProtocolError` for
 * oversize input, malformed protobuf, or a frame that fails codex's validation rules
 * (including a body of a kind this schema does not know, which reads as a missing body).
 */
export function decodeRelayFrame(bytes: Uint8Array): RelayFrame {
  checkSize(bytes.length);
  let message: FrameMessage;
  try {
    message = readFrameMessage(bytes);
  } catch (error) {
    if (!(error instanceof ProtoWireError)) throw error;
    throw new RelayProtocolError(`invalid relay message frame: ${error.message}`, {
      cause: error,
    });
  }
  const frame = fromMessage(message);
  validateRelayFrame(frame);
  return frame;
}

/** codex's `RelayMessageFrame::validate` rules, applied to the typed union. */
export function validateRelayFrame(frame: RelayFrame): void {
  if (frame.streamId.trim() === '') {
    throw new RelayProtocolError('relay message frame is missing stream_id');
  }
  switch (frame.kind) {
    case 'data':
      if (frame.payload.length === 0) {
        throw new RelayProtocolError('relay data message frame is missing required fields');
      }
      checkUint32(frame.seq, 'data seq');
      return;
    case 'handshake':
      if (frame.payload.length === 0) {
        throw new RelayProtocolError('relay handshake message frame is missing payload');
      }
      return;
    case 'reset':
      if (frame.reason === '') {
        throw new RelayProtocolError('relay reset message frame is missing reason');
      }
      return;
    case 'resume':
      checkUint32(frame.nextSeq, 'resume next_seq');
      return;
    case 'ack':
    case 'heartbeat':
      return;
  }
}

// Field numbers of RelayMessageFrame; the body is a oneof of one message field per kind.
const FIELD_VERSION = 1;
const FIELD_STREAM_ID = 2;
const FIELD_ACK = 3;
const FIELD_ACK_BITS = 4;
const FIELD_TRACEPARENT = 11;
const FIELD_TRACESTATE = 12;
const BODY_FIELD: Record<RelayFrameKind, number> = {
  data: 5,
  ack: 6,
  resume: 7,
  reset: 8,
  heartbeat: 9,
  handshake: 10,
};
/** The header's string fields (an optional one counts as present once it appears). */
const HEADER_STRING: Partial<Record<number, 'streamId' | 'traceparent' | 'tracestate'>> = {
  [FIELD_STREAM_ID]: 'streamId',
  [FIELD_TRACEPARENT]: 'traceparent',
  [FIELD_TRACESTATE]: 'tracestate',
};
const BODY_KIND = new Map<number, RelayFrameKind>(
  Object.entries(BODY_FIELD).map(([kind, field]) => [field, kind as RelayFrameKind]),
);

/** A decoded `RelayMessageFrame` before validation: proto3 defaults for what was absent. */
interface FrameMessage {
  version: number;
  streamId: string;
  traceparent?: string;
  tracestate?: string;
  body: BodyMessage | undefined;
}

/** The oneof body; `data`'s segment fields are only checked, never kept. */
interface BodyMessage {
  kind: RelayFrameKind;
  seq: number;
  segmentIndex: number;
  segmentCount: number;
  payload: Uint8Array;
  nextSeq: number;
  reason: string;
}

const EMPTY = new Uint8Array(0);

function readFrameMessage(bytes: Uint8Array): FrameMessage {
  const message: FrameMessage = { version: 0, streamId: '', body: undefined };
  const reader = new ProtoReader(bytes);
  while (!reader.done) {
    const { field, wireType } = reader.key();
    const kind = BODY_KIND.get(field);
    if (kind !== undefined) {
      reader.expect(field, wireType, WIRE_LENGTH_DELIMITED);
      // A oneof member seen again merges into itself; another member replaces it.
      const base = message.body?.kind === kind ? message.body : undefined;
      message.body = readBody(kind, reader.bytesField(), base);
    } else if (field === FIELD_VERSION) {
      reader.expect(field, wireType, WIRE_VARINT);
      message.version = reader.varint32();
    } else if (HEADER_STRING[field] !== undefined) {
      reader.expect(field, wireType, WIRE_LENGTH_DELIMITED);
      message[HEADER_STRING[field]] = reader.stringField();
    } else if (field === FIELD_ACK || field === FIELD_ACK_BITS) {
      reader.expect(field, wireType, WIRE_VARINT);
      reader.varint32(); // unused by codex on main
    } else {
      reader.skip(wireType); // a field this schema does not know
    }
  }
  return message;
}

/** Reads one body message; every body field is number 1–4, varint or bytes as the kind says. */
function readBody(
  kind: RelayFrameKind,
  bytes: Uint8Array,
  base: BodyMessage | undefined,
): BodyMessage {
  const body: BodyMessage = base
    ? { ...base }
    : { kind, seq: 0, segmentIndex: 0, segmentCount: 0, payload: EMPTY, nextSeq: 0, reason: '' };
  const reader = new ProtoReader(bytes);
  while (!reader.done) {
    const { field, wireType } = reader.key();
    const slot = BODY_SLOTS[kind][field];
    if (slot === undefined) {
      reader.skip(wireType);
    } else if (slot === 'payload') {
      reader.expect(field, wireType, WIRE_LENGTH_DELIMITED);
      body.payload = reader.bytesField();
    } else if (slot === 'reason') {
      reader.expect(field, wireType, WIRE_LENGTH_DELIMITED);
      body.reason = reader.stringField();
    } else {
      reader.expect(field, wireType, WIRE_VARINT);
      body[slot] = reader.varint32();
    }
  }
  return body;
}

/** Which field of each body message lands where (relay.proto). */
const BODY_SLOTS: Record<
  RelayFrameKind,
  Partial<
    Record<number, 'seq' | 'segmentIndex' | 'segmentCount' | 'payload' | 'nextSeq' | 'reason'>
  >
> = {
  data: { 1: 'seq', 2: 'segmentIndex', 3: 'segmentCount', 4: 'payload' },
  handshake: { 1: 'payload' },
  resume: { 1: 'nextSeq' },
  reset: { 1: 'reason' },
  ack: {},
  heartbeat: {},
};

function fromMessage(message: FrameMessage): RelayFrame {
  if (message.version !== RELAY_MESSAGE_FRAME_VERSION) {
    throw new RelayProtocolError(`unsupported relay message frame version ${message.version}`);
  }
  if (message.streamId.trim() === '') {
    throw new RelayProtocolError('relay message frame is missing stream_id');
  }
  const frame = bodyFrame(message.streamId, message.body);
  // Trace fields are rare (the first frame of a traced request): only then a second object.
  if (message.traceparent === undefined && message.tracestate === undefined) return frame;
  return { ...frame, ...traceFields(message) };
}

/** The typed frame of a body, without trace fields. */
function bodyFrame(streamId: string, body: BodyMessage | undefined): RelayFrame {
  switch (body?.kind) {
    case 'data':
      // Multi-segment data is not supported on main: segmentation happens inside the
      // encrypted stream (§4.3), so only index 0 of 1 is valid.
      if (body.segmentIndex !== 0 || body.segmentCount !== 1) {
        throw new RelayProtocolError('relay data message frame is missing required fields');
      }
      return { kind: 'data', streamId, seq: body.seq, payload: body.payload };
    case 'handshake':
      return { kind: 'handshake', streamId, payload: body.payload };
    case 'resume':
      return { kind: 'resume', streamId, nextSeq: body.nextSeq };
    case 'reset':
      return { kind: 'reset', streamId, reason: body.reason };
    case 'ack':
      return { kind: 'ack', streamId };
    case 'heartbeat':
      return { kind: 'heartbeat', streamId };
    case undefined:
      throw new RelayProtocolError('relay message frame is missing body');
  }
}

/** The body message of a frame other than data (see `dataFrameEnvelope`). */
function bodyBytes(frame: Exclude<RelayFrame, RelayDataFrame>): Uint8Array {
  const body = new ProtoWriter();
  switch (frame.kind) {
    case 'handshake':
      if (frame.payload.length > 0) body.bytes(1, frame.payload);
      break;
    case 'resume':
      body.uint32(1, frame.nextSeq);
      break;
    case 'reset':
      if (frame.reason !== '') body.string(1, frame.reason);
      break;
    case 'ack':
    case 'heartbeat':
      break;
  }
  return body.finish();
}

/** The trace fields, which follow the body (fields 11 and 12). */
function withTraceFields(writer: ProtoWriter, trace: RelayTraceContext): ProtoWriter {
  if (trace.traceparent !== undefined) writer.string(FIELD_TRACEPARENT, trace.traceparent);
  if (trace.tracestate !== undefined) writer.string(FIELD_TRACESTATE, trace.tracestate);
  return writer;
}

function traceFields(trace: RelayTraceContext | undefined): RelayTraceContext {
  const fields: { traceparent?: string; tracestate?: string } = {};
  if (trace?.traceparent !== undefined) fields.traceparent = trace.traceparent;
  if (trace?.tracestate !== undefined) fields.tracestate = trace.tracestate;
  return fields;
}

function checkSize(length: number): void {
  if (length > MAX_RELAY_WEBSOCKET_MESSAGE_SIZE) {
    throw new RelayProtocolError(
      `relay message frame of ${length} bytes exceeds the ${MAX_RELAY_WEBSOCKET_MESSAGE_SIZE}-byte WebSocket message limit`,
    );
  }
}

function checkUint32(value: number, what: string): void {
  if (!Number.isInteger(value) || value < 0 || value > MAX_UINT32) {
    throw new RelayProtocolError(`relay ${what} ${value} is not a 32-bit unsigned integer`);
  }
}
