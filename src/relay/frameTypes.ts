/**
 * The relay frame as a typed union (noise-relay.md §4), and the limits codex puts on frames;
 * frames.ts reads and writes them.
 */
/** `RELAY_MESSAGE_FRAME_VERSION`: the only version codex sends or accepts. */
export const RELAY_MESSAGE_FRAME_VERSION = 1;
/** `MAX_NOISE_RELAY_WEBSOCKET_MESSAGE_SIZE`: largest frame either endpoint sends or accepts. */
export const MAX_RELAY_WEBSOCKET_MESSAGE_SIZE = 256 * 1024;
/** The fixed reason of every reset the executor sends (`NOISE_RELAY_RESET_REASON`). */
export const NOISE_RELAY_RESET_REASON = 'noise_relay_protocol_error';

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
