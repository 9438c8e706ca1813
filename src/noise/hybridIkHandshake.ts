import {
  HYBRID_IK_MESSAGE1_OVERHEAD,
  HYBRID_IK_MESSAGE2_LENGTH,
  MAX_HARNESS_KEY_AUTHORIZATION_BYTES,
} from './constants.js';
import type { NoiseCryptoProvider, RandomSource } from './cryptoProvider.js';
import { NoiseHandshakeError } from './errors.js';
import { HYBRID_IK_PATTERN } from './handshakePattern.js';
import { HandshakeState } from './handshakeState.js';
import { identityKeys, type NoiseChannelIdentity } from './identity.js';
import { platformCryptoProvider } from './platformCryptoProvider.js';
import {
  NoiseChannelPublicKey,
  publicKeyRawKeys,
  type NoiseChannelPublicKeyJson,
} from './publicKey.js';
import { TransportCipher } from './transportCipher.js';

/** The result of a completed handshake: one cipher per direction plus the channel binding. */
export interface NoiseChannel {
  /** Encrypts what this side sends. */
  readonly send: TransportCipher;
  /** Decrypts what this side receives. */
  readonly receive: TransportCipher;
  /** Final handshake hash `h` (32 bytes), identical on both sides. */
  readonly handshakeHash: Uint8Array;
  /** The authenticated static key of the peer. */
  readonly remotePublicKey: NoiseChannelPublicKey;
}

interface CommonHandshakeOptions {
  /** This side's static identity. */
  readonly identity: NoiseChannelIdentity;
  /** Bytes from {@link prologue}; must match the peer's exactly. */
  readonly prologue: Uint8Array;
  /** Primitives (default {@link platformCryptoProvider}). */
  readonly crypto?: NoiseCryptoProvider;
  /** Randomness for ephemeral keys and encapsulations (default: the provider's CSPRNG). */
  readonly random?: RandomSource;
}

export interface InitiatorHandshakeOptions extends CommonHandshakeOptions {
  /** The executor's static key from the connect bundle (validated JSON or a parsed key). */
  readonly responderPublicKey: NoiseChannelPublicKey | NoiseChannelPublicKeyJson;
  /** The registry's `harness_key_authorization`: message 1's payload, ≤ 4096 UTF-8 bytes. */
  readonly authorization: string | Uint8Array;
}

export interface ResponderHandshakeOptions extends CommonHandshakeOptions {
  /** Message 1 as received in the harness's `handshake` frame. */
  readonly message1: Uint8Array;
  /** Authorization size limit in bytes (default 4096, as the codex executor enforces). */
  readonly maxAuthorizationBytes?: number;
}

/** Harness side after message 1 was written: send {@link message1}, then {@link finish} with message 2. */
export interface NoiseInitiatorHandshake {
  readonly message1: Uint8Array;
  /** Reads message 2 (3424 bytes, empty payload) and returns the transport channel. */
  finish(message2: Uint8Array): NoiseChannel;
}

/**
 * Executor side after message 1 was read and authenticated. Inspect
 * {@link initiatorPublicKey} and {@link authorization} (e.g. ask the registry) before calling
 * {@link accept}; to refuse, drop the object (and reset the stream).
 */
export interface NoiseResponderHandshake {
  /** The harness's static key, authenticated by message 1. */
  readonly initiatorPublicKey: NoiseChannelPublicKey;
  /** The harness key authorization (message 1's payload, valid UTF-8, size-checked). */
  readonly authorization: string;
  /** Writes message 2 and returns it with the transport channel. */
  accept(): { message2: Uint8Array; channel: NoiseChannel };
}

function defaults(options: CommonHandshakeOptions): {
  crypto: NoiseCryptoProvider;
  random: RandomSource;
} {
  const crypto = options.crypto ?? platformCryptoProvider;
  return { crypto, random: options.random ?? ((length) => crypto.randomBytes(length)) };
}

function channelOf(state: HandshakeState, remotePublicKey: NoiseChannelPublicKey): NoiseChannel {
  const { send, receive, handshakeHash } = state.split();
  return {
    send: new TransportCipher(send),
    receive: new TransportCipher(receive),
    handshakeHash,
    remotePublicKey,
  };
}

/**
 * Starts the `Noise_hybridIK_25519+MLKEM768_AESGCM_SHA256` handshake as initiator (harness)
 * and writes message 1 (3568 + L bytes, L = authorization length).
 */
export function initiatorHandshake(options: InitiatorHandshakeOptions): NoiseInitiatorHandshake {
  const { crypto, random } = defaults(options);
  const responderPublicKey = NoiseChannelPublicKey.fromJSON(options.responderPublicKey);
  const payload =
    typeof options.authorization === 'string'
      ? new TextEncoder().encode(options.authorization)
      : options.authorization;
  if (payload.length > MAX_HARNESS_KEY_AUTHORIZATION_BYTES) {
    throw new NoiseHandshakeError(
      'payload-too-large',
      `handshake payload is too large (${payload.length} bytes; the executor accepts at most ${MAX_HARNESS_KEY_AUTHORIZATION_BYTES})`,
    );
  }
  const state = new HandshakeState({
    pattern: HYBRID_IK_PATTERN,
    role: 'initiator',
    crypto,
    random,
    prologue: options.prologue,
    localStatic: identityKeys(options.identity),
    remoteStatic: publicKeyRawKeys(responderPublicKey),
  });
  const message1 = state.writeMessage(payload);
  let finished = false;
  return {
    message1,
    finish(message2) {
      if (finished) throw new NoiseHandshakeError('state', 'the handshake was already finished');
      finished = true;
      // Longer is a non-empty payload (reported after decryption); shorter is truncated.
      if (message2.length < HYBRID_IK_MESSAGE2_LENGTH) {
        throw new NoiseHandshakeError(
          'invalid-message',
          `invalid Noise channel message: message 2 must be ${HYBRID_IK_MESSAGE2_LENGTH} bytes, got ${message2.length}`,
        );
      }
      const response = state.readMessage(message2);
      if (response.length !== 0) {
        throw new NoiseHandshakeError(
          'unexpected-payload',
          'handshake response payload must be empty',
        );
      }
      return channelOf(state, responderPublicKey);
    },
  };
}

/**
 * Reads message 1 as responder (executor). Throws {@link NoiseHandshakeError} when it does not
 * authenticate (wrong executor key, mismatched prologue, tampering: reason `decrypt`), has a
 * wrong size, or carries an oversize or non-UTF-8 authorization. Nothing is sent until
 * {@link NoiseResponderHandshake.accept}.
 */
export function responderHandshake(options: ResponderHandshakeOptions): NoiseResponderHandshake {
  const { crypto, random } = defaults(options);
  const limit = options.maxAuthorizationBytes ?? MAX_HARNESS_KEY_AUTHORIZATION_BYTES;
  const { message1 } = options;
  if (message1.length < HYBRID_IK_MESSAGE1_OVERHEAD) {
    throw new NoiseHandshakeError(
      'invalid-message',
      `invalid Noise channel message: message 1 must be at least ${HYBRID_IK_MESSAGE1_OVERHEAD} bytes, got ${message1.length}`,
    );
  }
  // Checked before any crypto so an oversize message costs nothing.
  if (message1.length - HYBRID_IK_MESSAGE1_OVERHEAD > limit) {
    throw new NoiseHandshakeError(
      'payload-too-large',
      `harness key authorization exceeds ${limit} bytes`,
    );
  }
  const local = identityKeys(options.identity);
  const state = new HandshakeState({
    pattern: HYBRID_IK_PATTERN,
    role: 'responder',
    crypto,
    random,
    prologue: options.prologue,
    localStatic: local,
  });
  const payload = state.readMessage(message1);
  let authorization: string;
  try {
    authorization = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(payload);
  } catch {
    throw new NoiseHandshakeError(
      'invalid-authorization',
      'harness key authorization is not valid UTF-8',
    );
  }
  const remote = state.remoteStatic;
  if (remote === undefined || remote.kemPublicKey === undefined) {
    throw new NoiseHandshakeError('state', 'message 1 did not carry the initiator static key');
  }
  const initiatorPublicKey = NoiseChannelPublicKey.fromRaw(remote.dhPublicKey, remote.kemPublicKey);
  let accepted = false;
  return {
    initiatorPublicKey,
    authorization,
    accept() {
      if (accepted) throw new NoiseHandshakeError('state', 'the handshake was already accepted');
      accepted = true;
      const message2 = state.writeMessage(new Uint8Array(0));
      return { message2, channel: channelOf(state, initiatorPublicKey) };
    },
  };
}
