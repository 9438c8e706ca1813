import {
  createCipheriv,
  createDecipheriv,
  createHash,
  createHmac,
  createPrivateKey,
  createPublicKey,
  createSecretKey,
  diffieHellman,
  randomFillSync,
  type KeyObject,
} from 'node:crypto';
import type { PlatformCrypto } from '../platform.js';
import { oneShotDigest } from './oneShotDigest.js';

/** A plain `Uint8Array` view of a Node `Buffer` (no copy), so results compare equal everywhere. */
function asPlainBytes(buffer: Uint8Array): Uint8Array {
  return new Uint8Array(buffer.buffer, buffer.byteOffset, buffer.byteLength);
}

// Node 20 cannot import raw X25519 keys as such. JWK import builds the key straight from the raw
// bytes, without OpenSSL 3's DER decoder framework (`bench/noise-handshake.ts`;
// docs/performance.md).
// Node requires `x` beside `d` in a private JWK but derives the public half from `d` alone
// (checked by the RFC 7748 vector in spec/noise/cryptoProvider.spec.ts).
const JWK_PLACEHOLDER_X = Buffer.alloc(32).toString('base64url');

// Static keys are used on every handshake: keep their KeyObjects per array instance.
const privateKeyObjects = new WeakMap<Uint8Array, KeyObject>();
const publicKeyObjects = new WeakMap<Uint8Array, KeyObject>();

// A cipher state passes the same key array for every record: import it into OpenSSL once.
const aesKeyObjects = new WeakMap<Uint8Array, KeyObject>();

function aesKeyObject(key: Uint8Array): KeyObject {
  let keyObject = aesKeyObjects.get(key);
  if (keyObject === undefined) {
    checkLength('AES-256-GCM key', key, 32);
    keyObject = createSecretKey(key);
    aesKeyObjects.set(key, keyObject);
  }
  return keyObject;
}

const AES_GCM_TAG_LENGTH = 16;

// Handshake hashes cover at most a 1184-byte key plus a tag and the 32-byte hash; larger
// inputs stream through createHash.
const HASH_INPUT_SCRATCH_SIZE = 4096;
const hashInputScratch = new Uint8Array(HASH_INPUT_SCRATCH_SIZE);

// Small random draws (a handshake makes 7) come from a pool refilled 4 KiB at a time, since a
// CSPRNG call costs the same however few bytes it returns (docs/performance.md). Bytes handed
// out are zeroed in the pool, so it only ever holds randomness nobody has used yet.
const RANDOM_POOL_SIZE = 4096;
const MAX_POOLED_REQUEST = 256;
const randomPool = new Uint8Array(RANDOM_POOL_SIZE);
let randomPoolOffset = RANDOM_POOL_SIZE;

function pooledRandomBytes(length: number): Uint8Array {
  if (length > MAX_POOLED_REQUEST) return randomFillSync(new Uint8Array(length));
  if (randomPoolOffset + length > RANDOM_POOL_SIZE) {
    randomFillSync(randomPool);
    randomPoolOffset = 0;
  }
  const end = randomPoolOffset + length;
  const out = randomPool.slice(randomPoolOffset, end);
  randomPool.fill(0, randomPoolOffset, end);
  randomPoolOffset = end;
  return out;
}

function base64url(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64url');
}

function x25519PrivateKeyObject(privateKey: Uint8Array): KeyObject {
  let keyObject = privateKeyObjects.get(privateKey);
  if (keyObject === undefined) {
    keyObject = createPrivateKey({
      key: { kty: 'OKP', crv: 'X25519', d: base64url(privateKey), x: JWK_PLACEHOLDER_X },
      format: 'jwk',
    });
    privateKeyObjects.set(privateKey, keyObject);
  }
  return keyObject;
}

function x25519PublicKeyObject(publicKey: Uint8Array): KeyObject {
  let keyObject = publicKeyObjects.get(publicKey);
  if (keyObject === undefined) {
    keyObject = createPublicKey({
      key: { kty: 'OKP', crv: 'X25519', x: base64url(publicKey) },
      format: 'jwk',
    });
    publicKeyObjects.set(publicKey, keyObject);
  }
  return keyObject;
}

function checkLength(what: string, bytes: Uint8Array, length: number): void {
  if (bytes.length !== length)
    throw new RangeError(`${what} must be ${length} bytes, got ${bytes.length}`);
}

const sealInto: PlatformCrypto['aes256GcmSealInto'] = (
  key,
  nonce,
  associatedData,
  plaintext,
  target,
  offset,
) => {
  const length = plaintext.length + AES_GCM_TAG_LENGTH;
  if (offset < 0 || offset + length > target.length) {
    throw new RangeError('AES-256-GCM output does not fit in the target');
  }
  const cipher = createCipheriv('aes-256-gcm', aesKeyObject(key), nonce);
  if (associatedData.length > 0) cipher.setAAD(associatedData);
  // GCM is a stream mode: `update` returns the whole body and `final` nothing. Body and tag
  // are copied once into the target (no Buffer.concat, no extra view or key import per call).
  const body = cipher.update(plaintext);
  if (body.length !== plaintext.length || cipher.final().length !== 0) {
    throw new Error('node:crypto AES-256-GCM returned an unexpected output length');
  }
  target.set(body, offset);
  target.set(cipher.getAuthTag(), offset + plaintext.length);
  return length;
};

/** `node:crypto` (OpenSSL) for every primitive. */
export const nodeCrypto: PlatformCrypto = {
  randomBytes: pooledRandomBytes,

  x25519PublicKey(privateKey) {
    checkLength('X25519 private key', privateKey, 32);
    const jwk = createPublicKey(x25519PrivateKeyObject(privateKey)).export({ format: 'jwk' });
    if (typeof jwk.x !== 'string') throw new Error('node:crypto returned no X25519 public key');
    return asPlainBytes(Buffer.from(jwk.x, 'base64url'));
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

  aes256GcmSeal(key, nonce, associatedData, plaintext) {
    const out = new Uint8Array(plaintext.length + AES_GCM_TAG_LENGTH);
    sealInto(key, nonce, associatedData, plaintext, out, 0);
    return out;
  },

  aes256GcmSealInto: sealInto,

  aes256GcmOpen(key, nonce, associatedData, ciphertext) {
    if (ciphertext.length < AES_GCM_TAG_LENGTH) return undefined;
    const bodyLength = ciphertext.length - AES_GCM_TAG_LENGTH;
    const decipher = createDecipheriv('aes-256-gcm', aesKeyObject(key), nonce, {
      authTagLength: AES_GCM_TAG_LENGTH,
    });
    decipher.setAuthTag(ciphertext.subarray(bodyLength));
    if (associatedData.length > 0) decipher.setAAD(associatedData);
    const body = decipher.update(ciphertext.subarray(0, bodyLength));
    try {
      decipher.final(); // GCM: no output, only the tag check
    } catch {
      return undefined;
    }
    return asPlainBytes(body);
  },

  sha256(...parts) {
    let length = 0;
    for (const part of parts) length += part.length;
    if (length > HASH_INPUT_SCRATCH_SIZE) {
      const streaming = createHash('sha256');
      for (const part of parts) streaming.update(part);
      return asPlainBytes(streaming.digest());
    }
    // One-shot digest of a concatenation: no Hash object per call (mixHash runs ~40 times per
    // handshake).
    let offset = 0;
    for (const part of parts) {
      hashInputScratch.set(part, offset);
      offset += part.length;
    }
    const digest = oneShotDigest('sha256', hashInputScratch.subarray(0, length));
    hashInputScratch.fill(0, 0, length);
    return asPlainBytes(digest);
  },

  hmacSha256(key, ...parts) {
    const mac = createHmac('sha256', key);
    for (const part of parts) mac.update(part);
    return asPlainBytes(mac.digest());
  },

  sha3_256(data) {
    return asPlainBytes(oneShotDigest('sha3-256', data));
  },

  sha3_512(data) {
    return asPlainBytes(oneShotDigest('sha3-512', data));
  },

  shake128(data, outputLength) {
    return asPlainBytes(createHash('shake128', { outputLength }).update(data).digest());
  },

  shake256(outputLength, ...parts) {
    const hash = createHash('shake256', { outputLength });
    for (const part of parts) hash.update(part);
    return asPlainBytes(hash.digest());
  },
};
