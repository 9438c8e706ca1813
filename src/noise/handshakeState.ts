/**
 * The Noise handshake engine (`HandshakeState`) and its message reader. Over 400 lines for one
 * reason: it is one state machine, each token's write and read side kept together.
 */
import { concatBytes, copyBytes } from './bytes.js';
import { CipherState } from './cipherState.js';
import {
  AEAD_TAG_LENGTH,
  MLKEM768_CIPHERTEXT_LENGTH,
  MLKEM768_ENCAPSULATION_RANDOMNESS_LENGTH,
  MLKEM768_PUBLIC_KEY_LENGTH,
  MLKEM768_SEED_LENGTH,
  NOISE_MAX_MESSAGE_LENGTH,
  X25519_KEY_LENGTH,
} from './constants.js';
import type { NoiseCryptoProvider, RandomSource } from './cryptoProvider.js';
import { NoiseHandshakeError } from './errors.js';
import type { HandshakePattern, HandshakeToken } from './handshakePattern.js';
import { staticSharedSecret } from './staticSharedSecrets.js';
import { HandshakeDecryptFailure, SymmetricState } from './symmetricState.js';

export type HandshakeRole = 'initiator' | 'responder';

/** A party's keys: X25519 always, ML-KEM-768 in hybrid patterns. */
export interface LocalKeys {
  readonly dhPrivateKey: Uint8Array;
  readonly dhPublicKey: Uint8Array;
  readonly kemPublicKey?: Uint8Array;
  readonly kemSecretKey?: Uint8Array;
}

export interface RemoteKeys {
  readonly dhPublicKey: Uint8Array;
  readonly kemPublicKey?: Uint8Array;
}

export interface HandshakeStateOptions {
  readonly pattern: HandshakePattern;
  readonly role: HandshakeRole;
  readonly crypto: NoiseCryptoProvider;
  readonly random: RandomSource;
  readonly prologue: Uint8Array;
  readonly localStatic?: LocalKeys;
  readonly remoteStatic?: RemoteKeys;
  /** Fixed ephemeral X25519 private key (classical test vectors only). */
  readonly localEphemeralPrivateKey?: Uint8Array;
}

export interface SplitResult {
  /** Cipher for what this party sends. */
  readonly send: CipherState;
  /** Cipher for what this party receives. */
  readonly receive: CipherState;
  readonly handshakeHash: Uint8Array;
}

/**
 * Noise `HandshakeState` driven by a token pattern (Noise spec §5.3 plus clatter's hybrid KEM
 * tokens, spec/noise-relay.md §2.4). Randomness is drawn in token order: `ekem`/`skem` take 32
 * bytes of encapsulation randomness, `e` takes 32 bytes (X25519) then 64 (ML-KEM seed). That
 * order reproduces the DummyRng vectors.
 */
export class HandshakeState {
  readonly #options: HandshakeStateOptions;
  readonly #symmetric: SymmetricState;
  #ephemeral: LocalKeys | undefined;
  #remoteEphemeral: RemoteKeys | undefined;
  #remoteStatic: RemoteKeys | undefined;
  #messageIndex = 0;
  #failed = false;

  constructor(options: HandshakeStateOptions) {
    this.#options = options;
    this.#remoteStatic = options.remoteStatic;
    this.#symmetric = new SymmetricState(options.crypto, options.pattern.protocolName);
    this.#symmetric.mixHash(options.prologue);
    const initiatorStatic =
      options.role === 'initiator' ? options.localStatic : options.remoteStatic;
    const responderStatic =
      options.role === 'responder' ? options.localStatic : options.remoteStatic;
    this.#mixPreMessage(options.pattern.initiatorPreMessage, initiatorStatic);
    this.#mixPreMessage(options.pattern.responderPreMessage, responderStatic);
  }

  get isComplete(): boolean {
    return this.#messageIndex >= this.#options.pattern.messages.length;
  }

  /** Whether the next message is ours to write. */
  get isMyTurn(): boolean {
    const initiatorsTurn = this.#messageIndex % 2 === 0;
    return initiatorsTurn === (this.#options.role === 'initiator');
  }

  /** The peer's static keys, known after the message that carried `s` (or from the start). */
  get remoteStatic(): RemoteKeys | undefined {
    return this.#remoteStatic;
  }

  get handshakeHash(): Uint8Array {
    return this.#symmetric.handshakeHash;
  }

  writeMessage(payload: Uint8Array): Uint8Array {
    const tokens = this.#nextTokens(true);
    try {
      const parts: Uint8Array[] = [];
      for (const token of tokens) this.#writeToken(token, parts);
      parts.push(this.#symmetric.encryptAndHash(payload));
      const message = concatBytes(...parts);
      if (message.length > NOISE_MAX_MESSAGE_LENGTH) {
        throw new NoiseHandshakeError('payload-too-large', 'handshake payload is too large');
      }
      this.#messageIndex += 1;
      return message;
    } catch (error) {
      throw this.#fail(error);
    }
  }

  /** Processes a peer message and returns its decrypted payload. */
  readMessage(message: Uint8Array): Uint8Array {
    const tokens = this.#nextTokens(false);
    try {
      if (message.length > NOISE_MAX_MESSAGE_LENGTH) {
        throw new NoiseHandshakeError(
          'invalid-message',
          `invalid Noise channel message: ${message.length} bytes exceeds ${NOISE_MAX_MESSAGE_LENGTH}`,
        );
      }
      const reader = new MessageReader(message);
      for (const token of tokens) this.#readToken(token, reader);
      const payload = this.#symmetric.decryptAndHash(reader.rest(this.#symmetric.hasKey));
      this.#messageIndex += 1;
      return payload;
    } catch (error) {
      throw this.#fail(error);
    }
  }

  /** Noise `Split()`; only valid once every message was processed. */
  split(): SplitResult {
    if (!this.isComplete || this.#failed) {
      throw new NoiseHandshakeError('state', 'the handshake is not complete');
    }
    const [initiatorKey, responderKey] = this.#symmetric.split();
    // The ephemeral private keys have done their work (forward secrecy rests on forgetting them).
    if (this.#ephemeral !== undefined) {
      this.#ephemeral.dhPrivateKey.fill(0);
      this.#ephemeral.kemSecretKey?.fill(0);
      this.#ephemeral = undefined;
    }
    const toResponder = new CipherState(this.#options.crypto, initiatorKey);
    const toInitiator = new CipherState(this.#options.crypto, responderKey);
    const initiator = this.#options.role === 'initiator';
    return {
      send: initiator ? toResponder : toInitiator,
      receive: initiator ? toInitiator : toResponder,
      handshakeHash: this.#symmetric.handshakeHash,
    };
  }

  #nextTokens(writing: boolean): readonly HandshakeToken[] {
    if (this.#failed) {
      throw new NoiseHandshakeError('state', 'the handshake already failed; start a new one');
    }
    const tokens = this.#options.pattern.messages[this.#messageIndex];
    if (tokens === undefined) {
      throw new NoiseHandshakeError('state', 'the handshake is already complete');
    }
    if (this.isMyTurn !== writing) {
      throw new NoiseHandshakeError(
        'state',
        writing ? 'it is the peer’s turn to send a message' : 'it is our turn to send a message',
      );
    }
    return tokens;
  }

  #fail(error: unknown): Error {
    this.#failed = true;
    if (error instanceof NoiseHandshakeError) return error;
    if (error instanceof HandshakeDecryptFailure) {
      return new NoiseHandshakeError('decrypt', error.message);
    }
    const detail = error instanceof Error ? error.message : String(error);
    return new NoiseHandshakeError('key-agreement', `key agreement failed: ${detail}`, {
      cause: error,
    });
  }

  #mixPreMessage(tokens: readonly HandshakeToken[], keys: RemoteKeys | undefined): void {
    for (const token of tokens) {
      if (token !== 's')
        throw new NoiseHandshakeError('state', `unsupported pre-message token ${token}`);
      if (keys === undefined) {
        throw new NoiseHandshakeError(
          'state',
          'the pattern needs the responder static key in advance',
        );
      }
      this.#symmetric.mixHash(keys.dhPublicKey);
      if (this.#options.pattern.hybrid) this.#symmetric.mixHash(requireKem(keys.kemPublicKey));
    }
  }

  #writeToken(token: HandshakeToken, parts: Uint8Array[]): void {
    const { crypto, random } = this.#options;
    switch (token) {
      case 'e': {
        // Copied: providers cache key objects per array instance, so it must never change
        // (until the handshake is over and `split` zeroes it).
        const drawn =
          this.#options.localEphemeralPrivateKey === undefined
            ? random(X25519_KEY_LENGTH)
            : undefined;
        const dhPrivateKey = copyBytes(
          drawn ?? (this.#options.localEphemeralPrivateKey as Uint8Array),
        );
        drawn?.fill(0);
        const dhPublicKey = crypto.x25519PublicKey(dhPrivateKey);
        parts.push(dhPublicKey);
        this.#symmetric.mixHash(dhPublicKey);
        if (!this.#options.pattern.hybrid) {
          this.#ephemeral = { dhPrivateKey, dhPublicKey };
          return;
        }
        const seed = random(MLKEM768_SEED_LENGTH);
        const kem = crypto.mlkem768KeyPair(seed);
        seed.fill(0);
        parts.push(kem.publicKey);
        this.#symmetric.mixHash(kem.publicKey);
        this.#ephemeral = {
          dhPrivateKey,
          dhPublicKey,
          kemPublicKey: kem.publicKey,
          kemSecretKey: kem.secretKey,
        };
        return;
      }
      case 's': {
        const local = this.#requireLocalStatic();
        parts.push(this.#symmetric.encryptAndHash(local.dhPublicKey));
        if (this.#options.pattern.hybrid) {
          parts.push(this.#symmetric.encryptAndHash(requireKem(local.kemPublicKey)));
        }
        return;
      }
      case 'ekem': {
        const remote = requireKem(this.#requireRemoteEphemeral().kemPublicKey);
        const randomness = random(MLKEM768_ENCAPSULATION_RANDOMNESS_LENGTH);
        const { cipherText, sharedSecret } = crypto.mlkem768Encapsulate(remote, randomness);
        randomness.fill(0);
        parts.push(cipherText);
        this.#symmetric.mixHash(cipherText);
        this.#symmetric.mixKey(sharedSecret);
        sharedSecret.fill(0);
        return;
      }
      case 'skem': {
        const remote = requireKem(this.#requireRemoteStatic().kemPublicKey);
        const randomness = random(MLKEM768_ENCAPSULATION_RANDOMNESS_LENGTH);
        const { cipherText, sharedSecret } = crypto.mlkem768Encapsulate(remote, randomness);
        randomness.fill(0);
        parts.push(this.#symmetric.encryptAndHash(cipherText));
        this.#symmetric.mixKeyAndHash(sharedSecret);
        sharedSecret.fill(0);
        return;
      }
      default:
        this.#mixDh(token);
    }
  }

  #readToken(token: HandshakeToken, reader: MessageReader): void {
    const { crypto } = this.#options;
    const hybrid = this.#options.pattern.hybrid;
    switch (token) {
      case 'e': {
        const dhPublicKey = reader.take(X25519_KEY_LENGTH, 'ephemeral X25519 key');
        this.#symmetric.mixHash(dhPublicKey);
        if (!hybrid) {
          this.#remoteEphemeral = { dhPublicKey };
          return;
        }
        const kemPublicKey = reader.take(MLKEM768_PUBLIC_KEY_LENGTH, 'ephemeral ML-KEM-768 key');
        this.#symmetric.mixHash(kemPublicKey);
        this.#remoteEphemeral = { dhPublicKey, kemPublicKey };
        return;
      }
      case 's': {
        const tag = this.#symmetric.hasKey ? AEAD_TAG_LENGTH : 0;
        const dhPublicKey = this.#symmetric.decryptAndHash(
          reader.take(X25519_KEY_LENGTH + tag, 'static X25519 key'),
        );
        if (!hybrid) {
          this.#remoteStatic = { dhPublicKey };
          return;
        }
        const kemPublicKey = this.#symmetric.decryptAndHash(
          reader.take(MLKEM768_PUBLIC_KEY_LENGTH + tag, 'static ML-KEM-768 key'),
        );
        this.#remoteStatic = { dhPublicKey, kemPublicKey };
        return;
      }
      case 'ekem': {
        const cipherText = reader.take(MLKEM768_CIPHERTEXT_LENGTH, 'ephemeral KEM ciphertext');
        this.#symmetric.mixHash(cipherText);
        const ephemeral = this.#requireLocalEphemeral();
        const sharedSecret = crypto.mlkem768Decapsulate(
          cipherText,
          requireKem(ephemeral.kemSecretKey),
        );
        this.#symmetric.mixKey(sharedSecret);
        sharedSecret.fill(0);
        return;
      }
      case 'skem': {
        const tag = this.#symmetric.hasKey ? AEAD_TAG_LENGTH : 0;
        const cipherText = this.#symmetric.decryptAndHash(
          reader.take(MLKEM768_CIPHERTEXT_LENGTH + tag, 'static KEM ciphertext'),
        );
        const local = this.#requireLocalStatic();
        const sharedSecret = crypto.mlkem768Decapsulate(cipherText, requireKem(local.kemSecretKey));
        this.#symmetric.mixKeyAndHash(sharedSecret);
        sharedSecret.fill(0);
        return;
      }
      default:
        this.#mixDh(token);
    }
  }

  /** `ee`, `es`, `se`, `ss`: first letter is the initiator's key, second the responder's. */
  #mixDh(token: 'ee' | 'es' | 'se' | 'ss'): void {
    const initiator = this.#options.role === 'initiator';
    const initiatorKey = token[0];
    const responderKey = token[1];
    const localKind = initiator ? initiatorKey : responderKey;
    const remoteKind = initiator ? responderKey : initiatorKey;
    const local = localKind === 'e' ? this.#requireLocalEphemeral() : this.#requireLocalStatic();
    const remote =
      remoteKind === 'e' ? this.#requireRemoteEphemeral() : this.#requireRemoteStatic();
    const { crypto } = this.#options;
    if (token === 'ss') {
      // Cached per key pair (staticSharedSecrets.ts): not ours to zero.
      this.#symmetric.mixKey(staticSharedSecret(crypto, local.dhPrivateKey, remote.dhPublicKey));
      return;
    }
    const sharedSecret = crypto.x25519SharedSecret(local.dhPrivateKey, remote.dhPublicKey);
    this.#symmetric.mixKey(sharedSecret);
    sharedSecret.fill(0);
  }

  #requireLocalStatic(): LocalKeys {
    if (this.#options.localStatic === undefined) {
      throw new NoiseHandshakeError('state', 'the pattern needs a local static key');
    }
    return this.#options.localStatic;
  }

  #requireLocalEphemeral(): LocalKeys {
    if (this.#ephemeral === undefined) {
      throw new NoiseHandshakeError('state', 'no local ephemeral key yet');
    }
    return this.#ephemeral;
  }

  #requireRemoteStatic(): RemoteKeys {
    if (this.#remoteStatic === undefined) {
      throw new NoiseHandshakeError('state', 'the peer static key is not known yet');
    }
    return this.#remoteStatic;
  }

  #requireRemoteEphemeral(): RemoteKeys {
    if (this.#remoteEphemeral === undefined) {
      throw new NoiseHandshakeError('state', 'the peer ephemeral key is not known yet');
    }
    return this.#remoteEphemeral;
  }
}

function requireKem(key: Uint8Array | undefined): Uint8Array {
  if (key === undefined)
    throw new NoiseHandshakeError('state', 'a hybrid pattern needs ML-KEM keys');
  return key;
}

/** Sequential reader over one handshake message with a size error that names the field. */
class MessageReader {
  #offset = 0;
  constructor(private readonly message: Uint8Array) {}

  take(length: number, what: string): Uint8Array {
    if (this.#offset + length > this.message.length) {
      throw new NoiseHandshakeError(
        'invalid-message',
        `invalid Noise channel message: ${this.message.length} bytes is too short for the ${what}`,
      );
    }
    // A copy: the caller may reuse its buffer (e.g. a WebSocket frame) after this returns.
    const out = copyBytes(this.message.subarray(this.#offset, this.#offset + length));
    this.#offset += length;
    return out;
  }

  /** The remaining bytes (the payload); at least a tag when a key exists. */
  rest(expectTag: boolean): Uint8Array {
    const rest = this.message.subarray(this.#offset);
    if (expectTag && rest.length < AEAD_TAG_LENGTH) {
      throw new NoiseHandshakeError(
        'invalid-message',
        `invalid Noise channel message: ${this.message.length} bytes is too short for the payload tag`,
      );
    }
    return rest;
  }
}
