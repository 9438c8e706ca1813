import { ExecServerError } from '../protocol/errors.js';

/**
 * Errors of the Noise channel. Display texts follow upstream `NoiseChannelError`
 * (`src/noise_channel.rs`): a fixed prefix per kind, then the detail.
 */
export class NoiseChannelError extends ExecServerError {
  constructor(
    message: string,
    readonly detail: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** Key material could not be generated (bad seed length, RNG failure). */
export class NoiseKeyGenerationError extends NoiseChannelError {
  constructor(detail: string, options?: { cause?: unknown }) {
    super(`Noise channel key generation failed: ${detail}`, detail, options);
  }
}

/**
 * A `NoiseChannelPublicKey` JSON object is malformed: unknown or missing fields, another
 * suite label, non-canonical base64 or a wrong key length. Ask the registry for a fresh bundle.
 */
export class NoisePublicKeyError extends NoiseChannelError {
  constructor(detail: string, options?: { cause?: unknown }) {
    super(`invalid Noise channel public key: ${detail}`, detail, options);
  }
}

/** Why a handshake failed; lets callers (the relay's failure budget) react without parsing text. */
export type NoiseHandshakeFailure =
  /** An AEAD check failed: wrong responder key, mismatched prologue or tampered message. */
  | 'decrypt'
  /** A message has the wrong size or layout. */
  | 'invalid-message'
  /** The handshake payload (the harness key authorization) is too large. */
  | 'payload-too-large'
  /** The harness key authorization is not valid UTF-8. */
  | 'invalid-authorization'
  /** Message 2 carried a payload; it must be empty. */
  | 'unexpected-payload'
  /** X25519 or ML-KEM rejected a peer key (low-order point, malformed encapsulation key). */
  | 'key-agreement'
  /** The API was used out of order (a message written twice, finished twice, ...). */
  | 'state';

/** The Noise handshake could not be completed. The stream must be dropped (and reset). */
export class NoiseHandshakeError extends NoiseChannelError {
  constructor(
    readonly reason: NoiseHandshakeFailure,
    detail: string,
    options?: { cause?: unknown },
  ) {
    super(`Noise channel handshake failed: ${detail}`, detail, options);
  }
}

/** A transport record could not be produced or accepted. The stream must be dropped. */
export class NoiseTransportError extends NoiseChannelError {
  constructor(detail: string, options?: { cause?: unknown }) {
    super(`Noise channel transport failed: ${detail}`, detail, options);
  }
}

/** A transport record failed authentication: it was tampered with, truncated or is out of place. */
export class NoiseDecryptError extends NoiseTransportError {
  constructor() {
    super('Cipher error: Decrypt error');
  }
}

/**
 * A transport record arrived with a counter that was already consumed (a replay or duplicate).
 * Nonces are implicit, so each record decrypts exactly once, in send order.
 */
export class NoiseReplayError extends NoiseTransportError {
  constructor(
    readonly receivedCounter: number,
    readonly expectedCounter: number,
  ) {
    super(
      `record ${receivedCounter} was already received (expected record ${expectedCounter}); replayed records are rejected`,
    );
  }
}
