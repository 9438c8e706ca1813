import { NOISE_PROTOCOL_NAME } from './constants.js';

/**
 * Handshake tokens. Classical Noise uses `e`, `s` and the DH tokens; clatter's hybrid
 * patterns add `ekem` (encapsulate to the peer's ephemeral ML-KEM key) and `skem`
 * (encapsulate to the peer's static ML-KEM key).
 */
export type HandshakeToken = 'e' | 's' | 'ee' | 'es' | 'se' | 'ss' | 'ekem' | 'skem';

export interface HandshakePattern {
  /** Full Noise protocol name hashed into the initial state. */
  readonly protocolName: string;
  /** Hybrid patterns send an ML-KEM-768 key beside every X25519 key in `e` and `s`. */
  readonly hybrid: boolean;
  /** Pre-message tokens (only `s` is used by IK: the responder's static key). */
  readonly initiatorPreMessage: readonly HandshakeToken[];
  readonly responderPreMessage: readonly HandshakeToken[];
  /** Messages in order; even indexes are written by the initiator. */
  readonly messages: readonly (readonly HandshakeToken[])[];
}

/**
 * The codex pattern, clatter 2.2.0 `noise_hybrid_ik()`. Message 2's order changed in 2.2.0
 * (clatter ≤ 2.1 used `e, ee, se, ekem, skem`); the old order does not interoperate.
 */
export const HYBRID_IK_PATTERN: HandshakePattern = {
  protocolName: NOISE_PROTOCOL_NAME,
  hybrid: true,
  initiatorPreMessage: [],
  responderPreMessage: ['s'],
  messages: [
    ['skem', 'e', 'es', 's', 'ss'],
    ['ekem', 'skem', 'e', 'ee', 'se'],
  ],
};

/** Classical `Noise_IK_25519_AESGCM_SHA256`; runs the public cacophony vectors through the engine. */
export const CLASSICAL_IK_PATTERN: HandshakePattern = {
  protocolName: 'Noise_IK_25519_AESGCM_SHA256',
  hybrid: false,
  initiatorPreMessage: [],
  responderPreMessage: ['s'],
  messages: [
    ['e', 'es', 's', 'ss'],
    ['e', 'ee', 'se'],
  ],
};
