import { describe, expect, it } from '@jest/globals';
import {
  NoiseChannelIdentity,
  initiatorHandshake,
  nobleCryptoProvider,
  platformCryptoProvider,
  prologue,
  responderHandshake,
  type NoiseCryptoProvider,
} from '../../src/noise/index.js';
import { staticSharedSecret } from '../../src/noise/staticSharedSecrets.js';
import { hex } from './dummyRng.js';

/** The node provider, counting X25519 shared-secret computations. */
function countingProvider(): { crypto: NoiseCryptoProvider; dhCount: () => number } {
  let count = 0;
  const crypto: NoiseCryptoProvider = {
    ...platformCryptoProvider,
    x25519SharedSecret(privateKey, publicKey) {
      count += 1;
      return platformCryptoProvider.x25519SharedSecret(privateKey, publicKey);
    },
  };
  return { crypto, dhCount: () => count };
}

const bytes = prologue({ environmentId: 'env', executorRegistrationId: 'reg', streamId: 's' });

function handshake(
  crypto: NoiseCryptoProvider,
  harness: NoiseChannelIdentity,
  executor: NoiseChannelIdentity,
): string {
  const initiator = initiatorHandshake({
    identity: harness,
    // From JSON, as a harness gets it from the registry: a new array every time.
    responderPublicKey: executor.publicKey().toJSON(),
    prologue: bytes,
    authorization: 'authorization',
    crypto,
  });
  const { message2, channel } = responderHandshake({
    identity: executor,
    prologue: bytes,
    message1: initiator.message1,
    crypto,
  }).accept();
  const harnessChannel = initiator.finish(message2);
  expect(hex(harnessChannel.handshakeHash)).toBe(hex(channel.handshakeHash));
  return hex(channel.handshakeHash);
}

describe('static-static X25519 secrets', () => {
  it('are computed once per pair of identities, not once per handshake', () => {
    const { crypto, dhCount } = countingProvider();
    const harness = NoiseChannelIdentity.generate({ crypto });
    const executor = NoiseChannelIdentity.generate({ crypto });
    handshake(crypto, harness, executor);
    // es, ss, ee, se on each side.
    expect(dhCount()).toBe(8);
    const hashes = new Set<string>();
    for (let i = 0; i < 3; i++) hashes.add(handshake(crypto, harness, executor));
    expect(dhCount()).toBe(8 + 3 * 6);
    expect(hashes.size).toBe(3); // fresh ephemerals every time

    // Another harness is another pair: both sides compute its ss once more.
    const other = NoiseChannelIdentity.generate({ crypto });
    handshake(crypto, other, executor);
    expect(dhCount()).toBe(8 + 3 * 6 + 8);
  });

  it('return what the provider computes, for either provider, and copies', () => {
    const a = platformCryptoProvider.randomBytes(32);
    const b = platformCryptoProvider.randomBytes(32);
    const bPublic = platformCryptoProvider.x25519PublicKey(b);
    const expected = hex(nobleCryptoProvider.x25519SharedSecret(a, bPublic));
    const first = staticSharedSecret(platformCryptoProvider, a, bPublic);
    first.fill(0); // a caller scribbling on its result does not reach the remembered secret
    expect(hex(staticSharedSecret(nobleCryptoProvider, a, bPublic.slice()))).toBe(expected);
  });

  it('remember nothing for an unusable peer key', () => {
    const { crypto, dhCount } = countingProvider();
    const privateKey = crypto.randomBytes(32);
    const lowOrder = new Uint8Array(32);
    expect(() => staticSharedSecret(crypto, privateKey, lowOrder)).toThrow();
    expect(() => staticSharedSecret(crypto, privateKey, lowOrder)).toThrow();
    expect(dhCount()).toBe(2);
  });
});
