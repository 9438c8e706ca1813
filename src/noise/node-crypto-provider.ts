import {
  createCipheriv,
  createDecipheriv,
  createHash,
  createHmac,
  createPrivateKey,
  createPublicKey,
  diffieHellman,
  getRandomValues,
  type KeyObject,
} from 'node:crypto';
import { asPlainBytes, concatBytes } from './bytes.js';
import type { NoiseCryptoProvider } from './crypto-provider.js';
import { mlkem768Decapsulate, mlkem768Encapsulate, mlkem768KeyPair } from './mlkem768.js';

// Node 20 cannot import raw X25519 keys directly; wrap the 32 bytes in fixed DER headers.
const X25519_PKCS8_PREFIX = Uint8Array.from(Buffer.from('302e020100300506032b656e04220420', 'hex'));
const X25519_SPKI_PREFIX = Uint8Array.from(Buffer.from('302a300506032b656e032100', 'hex'));

function x25519PrivateKeyObject(privateKey: Uint8Array): KeyObject {
  return createPrivateKey({
    key: Buffer.from(concatBytes(X25519_PKCS8_PREFIX, privateKey)),
    format: 'der',
    type: 'pkcs8',
  });
}

function x25519PublicKeyObject(publicKey: Uint8Array): KeyObject {
  return createPublicKey({
    key: Buffer.from(concatBytes(X25519_SPKI_PREFIX, publicKey)),
    format: 'der',
    type: 'spki',
  });
}

function checkLength(what: string, bytes: Uint8Array, length: number): void {
  if (bytes.length !== length)
    throw new RangeError(`${what} must be ${length} bytes, got ${bytes.length}`);
}

/**
 * The default provider: `node:crypto` (OpenSSL) for X25519, AES-256-GCM, SHA-256 and HMAC;
 * ML-KEM-768 from `@noble/post-quantum`.
 */
export const nodeCryptoProvider: NoiseCryptoProvider = {
  name: 'node',

  randomBytes(length) {
    return getRandomValues(new Uint8Array(length));
  },

  x25519PublicKey(privateKey) {
    checkLength('X25519 private key', privateKey, 32);
    const der = createPublicKey(x25519PrivateKeyObject(privateKey)).export({
      format: 'der',
      type: 'spki',
    });
    return asPlainBytes(der.subarray(X25519_SPKI_PREFIX.length));
  },

  x25519SharedSecret(privateKey, publicKey) {
    checkLength('X25519 private key', privateKey, 32);
    checkLength('X25519 public key', publicKey, 32);
    // OpenSSL refuses an all-zero shared secret (low-order peer point) by throwing.
    return asPlainBytes(
      diffieHellman({
        privateKey: x25519PrivateKeyObject(privateKey),
        publicKey: x25519PublicKeyObject(publicKey),
      }),
    );
  },

  mlkem768KeyPair: mlkem768KeyPair,
  mlkem768Encapsulate: mlkem768Encapsulate,
  mlkem768Decapsulate: mlkem768Decapsulate,

  aes256GcmSeal(key, nonce, associatedData, plaintext) {
    const cipher = createCipheriv('aes-256-gcm', key, nonce);
    if (associatedData.length > 0) cipher.setAAD(associatedData);
    const body = cipher.update(plaintext);
    const tail = cipher.final();
    return asPlainBytes(Buffer.concat([body, tail, cipher.getAuthTag()]));
  },

  aes256GcmOpen(key, nonce, associatedData, ciphertext) {
    if (ciphertext.length < 16) return undefined;
    const bodyLength = ciphertext.length - 16;
    const decipher = createDecipheriv('aes-256-gcm', key, nonce);
    decipher.setAuthTag(ciphertext.subarray(bodyLength));
    if (associatedData.length > 0) decipher.setAAD(associatedData);
    const body = decipher.update(ciphertext.subarray(0, bodyLength));
    try {
      const tail = decipher.final();
      return asPlainBytes(tail.length === 0 ? body : Buffer.concat([body, tail]));
    } catch {
      return undefined;
    }
  },

  sha256(...parts) {
    const hash = createHash('sha256');
    for (const part of parts) hash.update(part);
    return asPlainBytes(hash.digest());
  },

  hmacSha256(key, ...parts) {
    const mac = createHmac('sha256', key);
    for (const part of parts) mac.update(part);
    return asPlainBytes(mac.digest());
  },
};
