import { gcm } from '@noble/ciphers/aes.js';
import { x25519 } from '@noble/curves/ed25519.js';
import { hmac } from '@noble/hashes/hmac.js';
import { sha256 } from '@noble/hashes/sha2.js';
import { randomBytes } from '@noble/hashes/utils.js';
import type { NoiseCryptoProvider } from './cryptoProvider.js';
import {
  nobleMlKem768Decapsulate,
  nobleMlKem768Encapsulate,
  nobleMlKem768KeyPair,
} from './nobleMlKem768.js';

/**
 * The portable provider: pure JavaScript `@noble/*` primitives only (no `node:crypto`), for
 * runtimes without OpenSSL. Slower than {@link nodeCryptoProvider}; wire-identical.
 */
export const nobleCryptoProvider: NoiseCryptoProvider = {
  name: 'noble',

  randomBytes(length) {
    return randomBytes(length);
  },

  x25519PublicKey(privateKey) {
    return x25519.getPublicKey(privateKey);
  },

  // Noble throws on an all-zero shared secret (low-order peer point), like OpenSSL.
  x25519SharedSecret(privateKey, publicKey) {
    return x25519.getSharedSecret(privateKey, publicKey);
  },

  mlkem768KeyPair: nobleMlKem768KeyPair,
  mlkem768Encapsulate: nobleMlKem768Encapsulate,
  mlkem768Decapsulate: nobleMlKem768Decapsulate,

  aes256GcmSeal(key, nonce, associatedData, plaintext) {
    return gcm(key, nonce, associatedData).encrypt(plaintext);
  },

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
};
