import type { NoiseCryptoProvider } from './cryptoProvider.js';
import { platform } from '../platform/index.js';

/**
 * The static-static X25519 secret (Noise `ss`) is the same on every handshake between two
 * identities, and a harness reconnects to the same executor again and again. Like WireGuard's
 * precomputed static-static secret, it is remembered: per local private-key array instance (a
 * `WeakMap`, so no secret outlives the caller's key), for the most recent peers only.
 * Ephemeral keys never come here, so they cannot push static peers out.
 */
const PEERS_PER_PRIVATE_KEY = 64;
const secretsByPrivateKey = new WeakMap<Uint8Array, Map<string, Uint8Array>>();

export function staticSharedSecret(
  crypto: NoiseCryptoProvider,
  privateKey: Uint8Array,
  publicKey: Uint8Array,
): Uint8Array {
  let peers = secretsByPrivateKey.get(privateKey);
  const peer = platform.base64Encode(publicKey);
  const known = peers?.get(peer);
  if (known !== undefined) {
    // Refresh recency: Map iteration order is insertion order.
    peers?.delete(peer);
    peers?.set(peer, known);
    return known.slice();
  }
  // Throws on an unusable peer key; nothing is remembered then.
  const secret = crypto.x25519SharedSecret(privateKey, publicKey);
  if (peers === undefined) {
    peers = new Map();
    secretsByPrivateKey.set(privateKey, peers);
  } else if (peers.size >= PEERS_PER_PRIVATE_KEY) {
    const oldest = peers.keys().next();
    if (oldest.done !== true) peers.delete(oldest.value);
  }
  peers.set(peer, secret.slice());
  return secret;
}
