/**
 * Every primitive in portable JavaScript (`@noble/*`) plus the runtime's CSPRNG: what browsers
 * use, since WebCrypto's AES-GCM, SHA and X25519 are asynchronous (and it has no SHA-3), while
 * the Noise channel is synchronous.
 */
import { gcm } from '@noble/ciphers/aes.js';
import { x25519 } from '@noble/curves/ed25519.js';
import { hmac } from '@noble/hashes/hmac.js';
import { sha256 } from '@noble/hashes/sha2.js';
import { sha3_256, sha3_512, shake128, shake256 } from '@noble/hashes/sha3.js';
import { randomBytes } from '@noble/hashes/utils.js';
import type { PlatformCrypto } from '../platform.js';

export const nobleCrypto: PlatformCrypto = {
  // crypto.getRandomValues (WebCrypto) underneath.
  randomBytes: (length) => randomBytes(length),

  x25519PublicKey: (privateKey) => x25519.getPublicKey(privateKey),
  // Noble throws on an all-zero shared secret (low-order peer point), like OpenSSL.
  x25519SharedSecret: (privateKey, publicKey) => x25519.getSharedSecret(privateKey, publicKey),

  aes256GcmSeal: (key, nonce, associatedData, plaintext) =>
    gcm(key, nonce, associatedData).encrypt(plaintext),

  aes256GcmSealInto(key, nonce, associatedData, plaintext, target, offset) {
    const sealed = gcm(key, nonce, associatedData).encrypt(plaintext);
    if (offset < 0 || offset + sealed.length > target.length) {
      throw new RangeError('AES-256-GCM output does not fit in the target');
    }
    target.set(sealed, offset);
    return sealed.length;
  },

  aes256GcmOpen(key, nonce, associatedData, ciphertext) {
    try {
      return gcm(key, nonce, associatedData).decrypt(ciphertext);
    } catch {
      return undefined;
    }
  },

  sha256(...parts) {
    const hash = sha256.create();
    for (const part of parts) hash.update(part);
    return hash.digest();
  },

  hmacSha256(key, ...parts) {
    const mac = hmac.create(sha256, key);
    for (const part of parts) mac.update(part);
    return mac.digest();
  },

  sha3_256: (data) => sha3_256(data),
  sha3_512: (data) => sha3_512(data),
  shake128: (data, outputLength) => shake128(data, { dkLen: outputLength }),
  shake256(outputLength, ...parts) {
    const hash = shake256.create({ dkLen: outputLength });
    for (const part of parts) hash.update(part);
    return hash.digest();
  },
};
