/**
 * Fast path for the frame kind that carries nearly every byte: `data`. It writes each data frame
 * into one exactly-sized buffer and reads data frames without copying the payload, where the
 * generic codec (`src/relay/frames.ts`) builds the body first and copies the payload twice
 * (docs/performance.md, "Fast paths"). Invariant: output is
 * byte-identical to `encodeRelayFrame`, and anything other than a plain, canonical data frame is
 * handed to `decodeRelayFrame`, so validation and error texts stay those of the relay layer
 * (spec/transport/noiseRelayFrameCodec.spec.ts).
 */
import {
  decodeRelayFrame,
  encodeRelayFrame,
  MAX_RELAY_WEBSOCKET_MESSAGE_SIZE,
  RELAY_MESSAGE_FRAME_VERSION,
  type RelayDataFrame,
  type RelayFrame,
  type RelayTraceContext,
} from '../relay/index.js';

const utf8Encoder = new TextEncoder();
const utf8Decoder = new TextDecoder('utf-8', { fatal: true });
const MAX_UINT32 = 0xffff_ffff;

// Field tags (field number << 3 | wire type) of RelayMessageFrame and RelayData.
const TAG_VERSION = 0x08;
const TAG_STREAM_ID = 0x12;
const TAG_ACK = 0x18;
const TAG_ACK_BITS = 0x20;
const TAG_DATA = 0x2a;
const TAG_TRACEPARENT = 0x5a;
const TAG_TRACESTATE = 0x62;
const TAG_DATA_SEQ = 0x08;
const TAG_DATA_SEGMENT_INDEX = 0x10;
const TAG_DATA_SEGMENT_COUNT = 0x18;
const TAG_DATA_PAYLOAD = 0x22;

/** Encodes any relay frame; data frames without the generic codec. */
export function encodeNoiseRelayFrame(frame: RelayFrame): Uint8Array {
  if (frame.kind !== 'data') return encodeRelayFrame(frame);
  const { streamId, seq, payload } = frame;
  if (
    streamId.trim() === '' ||
    payload.length === 0 ||
    !Number.isInteger(seq) ||
    seq < 0 ||
    seq > MAX_UINT32
  ) {
    return encodeRelayFrame(frame); // throws the relay layer's RelayProtocolError
  }
  const id = utf8Encoder.encode(streamId);
  const trace = traceFields(frame);
  const headerLength = dataFrameHeaderLength(id, seq, payload.length);
  const length = headerLength + payload.length + traceFieldsLength(trace);
  if (length > MAX_RELAY_WEBSOCKET_MESSAGE_SIZE) return encodeRelayFrame(frame); // throws
  const out = new Uint8Array(length);
  writeDataFrameHeader(out, 0, id, seq, payload.length);
  out.set(payload, headerLength);
  writeTraceFields(out, headerLength + payload.length, trace);
  return out;
}

/**
 * A data frame is `header ‖ payload ‖ trace fields`: these write its parts separately, so a
 * sender can seal a record straight into the frame's buffer, behind its header. The caller
 * guarantees what `encodeNoiseRelayFrame` checks: `streamId` (UTF-8 bytes) is canonical and
 * non-empty, `seq` is a u32, the payload is not empty and the frame fits in a relay message.
 */
export function dataFrameHeaderLength(
  streamId: Uint8Array,
  seq: number,
  payloadLength: number,
): number {
  const dataLength = dataBodyLength(seq, payloadLength);
  const fieldsBeforePayload = dataLength - payloadLength;
  return (
    2 + // version
    1 +
    varintLength(streamId.length) +
    streamId.length +
    1 +
    varintLength(dataLength) +
    fieldsBeforePayload
  );
}

/** Writes the header of a data frame at `at` (see `dataFrameHeaderLength`); returns its end. */
export function writeDataFrameHeader(
  out: Uint8Array,
  at: number,
  streamId: Uint8Array,
  seq: number,
  payloadLength: number,
): number {
  out[at++] = TAG_VERSION;
  out[at++] = RELAY_MESSAGE_FRAME_VERSION;
  out[at++] = TAG_STREAM_ID;
  at = writeVarint(out, at, streamId.length);
  out.set(streamId, at);
  at += streamId.length;
  out[at++] = TAG_DATA;
  at = writeVarint(out, at, dataBodyLength(seq, payloadLength));
  if (seq !== 0) {
    out[at++] = TAG_DATA_SEQ;
    at = writeVarint(out, at, seq);
  }
  out[at++] = TAG_DATA_SEGMENT_COUNT;
  out[at++] = 1;
  out[at++] = TAG_DATA_PAYLOAD;
  return writeVarint(out, at, payloadLength);
}

/** The UTF-8 trace fields of a data frame, as they follow its payload. */
export interface DataFrameTraceFields {
  readonly traceparent?: Uint8Array;
  readonly tracestate?: Uint8Array;
}

export function traceFields(trace: RelayTraceContext | undefined): DataFrameTraceFields {
  if (trace === undefined) return {};
  return {
    ...(trace.traceparent === undefined
      ? {}
      : { traceparent: utf8Encoder.encode(trace.traceparent) }),
    ...(trace.tracestate === undefined ? {} : { tracestate: utf8Encoder.encode(trace.tracestate) }),
  };
}

export function traceFieldsLength({ traceparent, tracestate }: DataFrameTraceFields): number {
  return (
    (traceparent ? 1 + varintLength(traceparent.length) + traceparent.length : 0) +
    (tracestate ? 1 + varintLength(tracestate.length) + tracestate.length : 0)
  );
}

/** Writes the trace fields at `at`; returns their end. */
export function writeTraceFields(
  out: Uint8Array,
  at: number,
  { traceparent, tracestate }: DataFrameTraceFields,
): number {
  if (traceparent) at = writeBytesField(out, at, TAG_TRACEPARENT, traceparent);
  if (tracestate) at = writeBytesField(out, at, TAG_TRACESTATE, tracestate);
  return at;
}

/** Length of the RelayData message: seq (omitted at 0), segment_count = 1, payload. */
function dataBodyLength(seq: number, payloadLength: number): number {
  return (
    (seq === 0 ? 0 : 1 + varintLength(seq)) + 2 + 1 + varintLength(payloadLength) + payloadLength
  );
}

/**
 * Decodes one binary WebSocket message. A canonical data frame is parsed here (its payload is a
 * view of `bytes`); everything else, including every malformed input, goes through
 * `decodeRelayFrame`, which throws `RelayProtocolError` with codex's texts.
 */
export function decodeNoiseRelayFrame(bytes: Uint8Array): RelayFrame {
  return decodeDataFrame(bytes) ?? decodeRelayFrame(bytes);
}

/** The data frame in `bytes`, or undefined when it is anything else (or not plainly valid). */
function decodeDataFrame(bytes: Uint8Array): RelayDataFrame | undefined {
  if (bytes.length > MAX_RELAY_WEBSOCKET_MESSAGE_SIZE) return undefined;
  const reader = new Reader(bytes);
  let version = 0;
  let streamId: string | undefined;
  let body: { start: number; end: number } | undefined;
  let traceparent: string | undefined;
  let tracestate: string | undefined;
  while (!reader.done) {
    const tag = reader.varint();
    switch (tag) {
      case TAG_VERSION:
        version = reader.varint();
        break;
      case TAG_STREAM_ID:
        streamId = reader.string();
        break;
      case TAG_ACK:
      case TAG_ACK_BITS:
        reader.varint();
        break;
      case TAG_DATA: {
        if (body) return undefined; // a repeated message field merges: leave it to the codec
        const length = reader.varint();
        body = { start: reader.offset, end: reader.skip(length) };
        break;
      }
      case TAG_TRACEPARENT:
        traceparent = reader.string();
        break;
      case TAG_TRACESTATE:
        tracestate = reader.string();
        break;
      default:
        return undefined; // another body kind or an unknown field
    }
    if (reader.failed) return undefined;
  }
  if (version !== RELAY_MESSAGE_FRAME_VERSION || !body || streamId === undefined) return undefined;
  if (streamId.trim() === '') return undefined;
  const data = new Reader(bytes, body.start, body.end);
  let seq = 0;
  let segmentIndex = 0;
  let segmentCount = 0;
  let payload: Uint8Array | undefined;
  while (!data.done) {
    const tag = data.varint();
    switch (tag) {
      case TAG_DATA_SEQ:
        seq = data.varint();
        break;
      case TAG_DATA_SEGMENT_INDEX:
        segmentIndex = data.varint();
        break;
      case TAG_DATA_SEGMENT_COUNT:
        segmentCount = data.varint();
        break;
      case TAG_DATA_PAYLOAD: {
        const length = data.varint();
        const start = data.offset;
        payload = bytes.subarray(start, data.skip(length));
        break;
      }
      default:
        return undefined;
    }
    if (data.failed) return undefined;
  }
  if (segmentIndex !== 0 || segmentCount !== 1 || !payload || payload.length === 0) {
    return undefined;
  }
  const frame: {
    kind: 'data';
    streamId: string;
    seq: number;
    payload: Uint8Array;
    traceparent?: string;
    tracestate?: string;
  } = { kind: 'data', streamId, seq, payload };
  if (traceparent !== undefined) frame.traceparent = traceparent;
  if (tracestate !== undefined) frame.tracestate = tracestate;
  return frame;
}

/** Minimal protobuf reader: varints up to 32 bits and length-delimited fields; never throws. */
class Reader {
  failed = false;

  constructor(
    private readonly bytes: Uint8Array,
    public offset = 0,
    private readonly end = bytes.length,
  ) {}

  get done(): boolean {
    return this.failed || this.offset >= this.end;
  }

  varint(): number {
    let value = 0;
    for (let shift = 0; shift < 35; shift += 7) {
      if (this.offset >= this.end) break;
      const byte = this.bytes[this.offset++]!;
      value += (byte & 0x7f) * 2 ** shift;
      if ((byte & 0x80) === 0) {
        if (value > MAX_UINT32) break;
        return value;
      }
    }
    this.failed = true;
    return 0;
  }

  /** Advances over `length` bytes and returns the new offset. */
  skip(length: number): number {
    if (this.failed || length > this.end - this.offset) {
      this.failed = true;
      return this.offset;
    }
    this.offset += length;
    return this.offset;
  }

  string(): string | undefined {
    const length = this.varint();
    const start = this.offset;
    const end = this.skip(length);
    if (this.failed) return undefined;
    try {
      return utf8Decoder.decode(this.bytes.subarray(start, end));
    } catch {
      this.failed = true;
      return undefined;
    }
  }
}

function varintLength(value: number): number {
  let length = 1;
  while (value >= 0x80) {
    value = Math.floor(value / 128);
    length++;
  }
  return length;
}

function writeVarint(out: Uint8Array, at: number, value: number): number {
  while (value >= 0x80) {
    out[at++] = (value & 0x7f) | 0x80;
    value = Math.floor(value / 128);
  }
  out[at++] = value;
  return at;
}

function writeBytesField(out: Uint8Array, at: number, tag: number, bytes: Uint8Array): number {
  out[at++] = tag;
  at = writeVarint(out, at, bytes.length);
  out.set(bytes, at);
  return at + bytes.length;
}
