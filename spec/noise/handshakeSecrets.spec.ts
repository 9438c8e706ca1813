/**
 * Handshake secrets are zeroed once used, as far as JavaScript allows (issue #14, crypto
 * hygiene): after a full hybrid IK handshake on both sides, every random draw, every ephemeral
 * X25519 and ML-KEM shared secret, the ephemeral private keys and every HKDF output that is
 * not a transport key hold only zeros. The static-static X25519 result is cached per key pair
 * (staticSharedSecrets.ts) and stays. A recording provider wraps the node one to see them.
 */
import { describe, expect, it } from '@jest/globals';
import { platformCryptoProvider } from '../../src/noise/index.js';
import type { NoiseCryptoProvider } from '../../src/noise/cryptoProvider.js';
import {
  NoiseChannelIdentity,
  initiatorHandshake,
  prologue,
  responderHandshake,
} from '../../src/noise/index.js';

const isZero = (bytes: Uint8Array): boolean => bytes.every((byte) => byte === 0);

function recordingProvider(): {
  crypto: NoiseCryptoProvider;
  random: (length: number) => Uint8Array;
  seen: Record<
    'random' | 'x25519' | 'kem' | 'ephemeralPrivate' | 'kemSecretKey' | 'hmac',
    Uint8Array[]
  >;
} {
  const seen = {
    random: [] as Uint8Array[],
    x25519: [] as Uint8Array[],
    kem: [] as Uint8Array[],
    ephemeralPrivate: [] as Uint8Array[],
    kemSecretKey: [] as Uint8Array[],
    hmac: [] as Uint8Array[],
  };
  const base = platformCryptoProvider;
  const crypto: NoiseCryptoProvider = {
    ...base,
    name: 'recording',
    x25519PublicKey(privateKey) {
      seen.ephemeralPrivate.push(privateKey);
      return base.x25519PublicKey(privateKey);
    },
    x25519SharedSecret(privateKey, publicKey) {
      const secret = base.x25519SharedSecret(privateKey, publicKey);
      seen.x25519.push(secret);
      return secret;
    },
    mlkem768KeyPair(seed) {
      const pair = base.mlkem768KeyPair(seed);
      seen.kemSecretKey.push(pair.secretKey);
      return pair;
    },
    mlkem768Encapsulate(publicKey, randomness) {
      const sealed = base.mlkem768Encapsulate(publicKey, randomness);
      seen.kem.push(sealed.sharedSecret);
      return sealed;
    },
    mlkem768Decapsulate(cipherText, secretKey) {
      const secret = base.mlkem768Decapsulate(cipherText, secretKey);
      seen.kem.push(secret);
      return secret;
    },
    hmacSha256(key, ...data) {
      const mac = base.hmacSha256(key, ...data);
      seen.hmac.push(mac);
      return mac;
    },
  };
  const random = (length: number): Uint8Array => {
    const bytes = base.randomBytes(length);
    seen.random.push(bytes);
    return bytes;
  };
  return { crypto, random, seen };
}

describe('handshake secrets', () => {
  it('are zeroed on both sides once the handshake is split', () => {
    const harness = NoiseChannelIdentity.generate();
    const executor = NoiseChannelIdentity.generate();
    const streamPrologue = prologue({
      environmentId: 'env',
      executorRegistrationId: 'registration',
      streamId: 'stream',
    });
    const initiatorSide = recordingProvider();
    const responderSide = recordingProvider();
    const initiator = initiatorHandshake({
      identity: harness,
      responderPublicKey: executor.publicKey(),
      prologue: streamPrologue,
      authorization: 'authorization',
      crypto: initiatorSide.crypto,
      random: initiatorSide.random,
    });
    const responder = responderHandshake({
      identity: executor,
      prologue: streamPrologue,
      message1: initiator.message1,
      crypto: responderSide.crypto,
      random: responderSide.random,
    });
    const { message2, channel } = responder.accept();
    const harnessChannel = initiator.finish(message2);

    for (const { seen } of [initiatorSide, responderSide]) {
      expect(seen.random.length).toBeGreaterThanOrEqual(3);
      expect(seen.random.every(isZero)).toBe(true);
      expect(seen.kem.length).toBe(3); // skem in message 1; ekem and skem in message 2
      expect(seen.kem.every(isZero)).toBe(true);
      expect(seen.ephemeralPrivate.length).toBe(1);
      expect(seen.ephemeralPrivate.every(isZero)).toBe(true);
      // ee, es/se zeroed; ss (static-static) is computed through the cache and stays.
      expect(seen.x25519.filter((secret) => !isZero(secret)).length).toBeLessThanOrEqual(1);
      expect(seen.x25519.filter(isZero).length).toBeGreaterThanOrEqual(2);
    }
    expect(responderSide.seen.kemSecretKey.every(isZero)).toBe(true);
    expect(initiatorSide.seen.kemSecretKey.every(isZero)).toBe(true);
    // HKDF: only the two transport keys of each side survive (and the handshake still works).
    for (const { seen } of [initiatorSide, responderSide]) {
      expect(seen.hmac.filter((mac) => !isZero(mac)).length).toBeLessThanOrEqual(2 + 2);
    }
    const sealed = harnessChannel.send.encrypt(new TextEncoder().encode('still works'));
    expect(new TextDecoder().decode(channel.receive.decrypt(sealed))).toBe('still works');
  });
});
