/**
 * Wire constants of the codex Noise channel (spec/noise-relay.md §2). Two different name
 * strings exist and mixing them up silently breaks interop: the *suite label* travels in the
 * public-key JSON, the *protocol name* is what clatter hashes into the handshake state.
 */

/** Suite label carried in `NoiseChannelPublicKey` JSON (`NOISE_CHANNEL_SUITE` upstream). */
export const NOISE_CHANNEL_SUITE = 'Noise_hybridIK_X25519+MLKEM768_AESGCM_SHA256';

/** Noise protocol name hashed into `h`/`ck` (clatter 2.2.0 component names: `25519`, not `X25519`). */
export const NOISE_PROTOCOL_NAME = 'Noise_hybridIK_25519+MLKEM768_AESGCM_SHA256';

/** First prologue part: the domain separation constant. */
export const NOISE_PROLOGUE_DOMAIN = 'codex-exec-server-relay-noise/v1';

/** Largest Noise message (handshake or transport) in bytes, per the Noise framework. */
export const NOISE_MAX_MESSAGE_LENGTH = 65535;

/** The executor refuses a harness key authorization longer than this (UTF-8 bytes). */
export const MAX_HARNESS_KEY_AUTHORIZATION_BYTES = 4096;

export const X25519_KEY_LENGTH = 32;
export const MLKEM768_PUBLIC_KEY_LENGTH = 1184;
export const MLKEM768_SECRET_KEY_LENGTH = 2400;
export const MLKEM768_CIPHERTEXT_LENGTH = 1088;
export const MLKEM768_SEED_LENGTH = 64;
export const MLKEM768_ENCAPSULATION_RANDOMNESS_LENGTH = 32;
export const AEAD_TAG_LENGTH = 16;
export const HASH_LENGTH = 32;

/** Message 1 size without its payload: skem ct, e (X25519 + ML-KEM), encrypted s pair, payload tag. */
export const HYBRID_IK_MESSAGE1_OVERHEAD = 3568;
/** Message 2 size (its payload is always empty). */
export const HYBRID_IK_MESSAGE2_LENGTH = 3424;
