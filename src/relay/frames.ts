/**
 * Relay frames (noise-relay.md §4): one protobuf `RelayMessageFrame` per binary WebSocket
 * message. This module turns them into a small typed union, checks codex's validation rules on
 * both encode and decode, and enforces the 256 KiB WebSocket message limit.
 */
import { create, fromBinary, toBinary } from '@bufbuild/protobuf';
import {
  RelayAckSchema,
  RelayDataSchema,
  RelayHandshakeSchema,
  RelayHeartbeatSchema,
  RelayMessageFrameSchema,
  RelayResetSchema,
  RelayResumeSchema,
  type RelayMessageFrame as RelayMessageFrameMessage,
} from './gen/relay_pb.js';
import { RelayProtocolError } from './relayProtocolError.js';

/** `RELAY_MESSAGE_FRAME_VERSION`: the only version codex sends or accepts. */
export const RELAY_MESSAGE_FRAME_VERSION = 1;
/** `MAX_NOISE_RELAY_WEBSOCKET_MESSAGE_SIZE`: largest frame either endpoint sends or accepts. */
export const MAX_RELAY_WEBSOCKET_MESSAGE_SIZE = 256 * 1024;
/** The fixed reason of every reset the executor sends (`NOISE_RELAY_RESET_REASON`). */
export const NOISE_RELAY_RESET_REASON = 'noise_relay_protocol_error';

const MAX_UINT32 = 0xffff_ffff;

/** Fields every frame kind shares. Trace fields travel in the clear; receivers ignore them. */
export interface RelayFrameHeader {
  readonly streamId: string;
  readonly traceparent?: string;
  readonly tracestate?: string;
}

/** One encrypted Noise transport record; `seq` counts from 0 and equals the AEAD nonce. */
export interface RelayDataFrame extends RelayFrameHeader {
  readonly kind: 'data';
  readonly seq: number;
  readonly payload: Uint8Array;
}

/** One Noise handshake message (msg 1 from the harness, msg 2 from the executor). */
export interface RelayHandshakeFrame extends RelayFrameHeader {
  readonly kind: 'handshake';
  readonly payload: Uint8Array;
}

/** Sent first by a harness (next_seq 0) to claim its stream id; endpoints ignore it. */
export interface RelayResumeFrame extends RelayFrameHeader {
  readonly kind: 'resume';
  readonly nextSeq: number;
}

/** Stream teardown. The reason is unauthenticated; harnesses discard it. */
export interface RelayResetFrame extends RelayFrameHeader {
  readonly kind: 'reset';
  readonly reason: string;
}

/** `ack_frame` / `heartbeat`: never sent by codex on main; receivers ignore them. */
export interface RelayAckFrame extends RelayFrameHeader {
  readonly kind: 'ack';
}
export interface RelayHeartbeatFrame extends RelayFrameHeader {
  readonly kind: 'heartbeat';
}

export type RelayFrame =
  | RelayDataFrame
  | RelayHandshakeFrame
  | RelayResumeFrame
  | RelayResetFrame
  | RelayAckFrame
  | RelayHeartbeatFrame;

export type RelayFrameKind = RelayFrame['kind'];

/** Optional W3C trace context for the first data frame of a traced request (§5.4). */
export interface RelayTraceContext {
  readonly traceparent?: string;
  readonly tracestate?: string;
}

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
  const bytes = toBinary(RelayMessageFrameSchema, toMessage(frame));
  checkSize(bytes.length);
  return bytes;
}

/**
 * Decodes and validates one binary WebSocket message. Throws `RelayProtocolError` for
 * oversize input, malformed protobuf, or a frame that fails codex's validation rules
 * (including a body of a kind this schema does not know, which reads as a missing body).
 */
export function decodeRelayFrame(bytes: Uint8Array): RelayFrame {
  checkSize(bytes.length);
  let message: RelayMessageFrameMessage;
  try {
    message = fromBinary(RelayMessageFrameSchema, bytes);
  } catch (error) {
    throw new RelayProtocolError(`invalid relay message frame: ${describe(error)}`, {
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

function fromMessage(message: RelayMessageFrameMessage): RelayFrame {
  if (message.version !== RELAY_MESSAGE_FRAME_VERSION) {
    throw new RelayProtocolError(`unsupported relay message frame version ${message.version}`);
  }
  if (message.streamId.trim() === '') {
    throw new RelayProtocolError('relay message frame is missing stream_id');
  }
  const header: RelayFrameHeader = {
    streamId: message.streamId,
    ...traceFields({ traceparent: message.traceparent, tracestate: message.tracestate }),
  };
  const body = message.body;
  switch (body.case) {
    case 'data': {
      // Multi-segment data is not supported on main: segmentation happens inside the
      // encrypted stream (§4.3), so only index 0 of 1 is valid.
      const { seq, segmentIndex, segmentCount, payload } = body.value;
      if (segmentIndex !== 0 || segmentCount !== 1) {
        throw new RelayProtocolError('relay data message frame is missing required fields');
      }
      return { ...header, kind: 'data', seq, payload };
    }
    case 'handshake':
      return { ...header, kind: 'handshake', payload: body.value.payload };
    case 'resume':
      return { ...header, kind: 'resume', nextSeq: body.value.nextSeq };
    case 'reset':
      return { ...header, kind: 'reset', reason: body.value.reason };
    case 'ackFrame':
      return { ...header, kind: 'ack' };
    case 'heartbeat':
      return { ...header, kind: 'heartbeat' };
    case undefined:
      throw new RelayProtocolError('relay message frame is missing body');
  }
}

function toMessage(frame: RelayFrame): RelayMessageFrameMessage {
  return create(RelayMessageFrameSchema, {
    version: RELAY_MESSAGE_FRAME_VERSION,
    streamId: frame.streamId,
    body: toBody(frame),
    ...traceFields(frame),
  });
}

function toBody(frame: RelayFrame): RelayMessageFrameMessage['body'] {
  switch (frame.kind) {
    case 'data':
      return {
        case: 'data',
        value: create(RelayDataSchema, {
          seq: frame.seq,
          segmentIndex: 0,
          segmentCount: 1,
          payload: frame.payload,
        }),
      };
    case 'handshake':
      return { case: 'handshake', value: create(RelayHandshakeSchema, { payload: frame.payload }) };
    case 'resume':
      return { case: 'resume', value: create(RelayResumeSchema, { nextSeq: frame.nextSeq }) };
    case 'reset':
      return { case: 'reset', value: create(RelayResetSchema, { reason: frame.reason }) };
    case 'ack':
      return { case: 'ackFrame', value: create(RelayAckSchema) };
    case 'heartbeat':
      return { case: 'heartbeat', value: create(RelayHeartbeatSchema) };
  }
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

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
