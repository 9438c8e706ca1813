import * as nodeCrypto from 'node:crypto';

type OneShotHash = (algorithm: string, data: Uint8Array, outputEncoding: 'buffer') => Buffer;

// `crypto.hash()` (a digest without a Hash object: cheaper for the many small hashes of a
// handshake) arrived in Node 20.12 and 21.7; `engines` admits older 20.x, where it is missing.
// A namespace import keeps a missing export from failing the module link.
const hashOnce = (nodeCrypto as { hash?: OneShotHash }).hash;

/** The digest of `data` with a fixed-output `node:crypto` hash such as `sha256` or `sha3-256`. */
export function oneShotDigest(algorithm: string, data: Uint8Array): Buffer {
  if (hashOnce !== undefined) return hashOnce(algorithm, data, 'buffer');
  return nodeCrypto.createHash(algorithm).update(data).digest();
}
