import { describe, expect, it } from '@jest/globals';
import { inspect } from 'node:util';
import {
  NoiseChannelIdentity,
  NoiseKeyGenerationError,
  nobleCryptoProvider,
} from '../../src/noise/index.js';
import { dummyRng, hex } from './dummyRng.js';

describe('NoiseChannelIdentity', () => {
  it('never serializes or prints its private keys', () => {
    const secrets = {
      x25519PrivateKey: new Uint8Array(32).fill(0x5a),
      mlkem768Seed: new Uint8Array(64).fill(0x6b),
    };
    const identity = NoiseChannelIdentity.fromSecrets(secrets);
    const serialized = JSON.stringify(identity);
    expect(JSON.parse(serialized)).toEqual(identity.publicKey().toJSON());
    const shown = `${inspect(identity)} ${String(identity)} ${JSON.stringify({ identity })}`;
    for (const secret of [secrets.x25519PrivateKey, secrets.mlkem768Seed]) {
      expect(shown).not.toContain(hex(secret));
      expect(shown).not.toContain(Buffer.from(secret).toString('base64'));
    }
    expect(Object.keys(identity)).toEqual([]);
  });

  it('derives the same keys from the same randomness with either provider', () => {
    const a = NoiseChannelIdentity.generate({ random: dummyRng() });
    const b = NoiseChannelIdentity.generate({ random: dummyRng(), crypto: nobleCryptoProvider });
    expect(a.publicKey().equals(b.publicKey())).toBe(true);
    expect(NoiseChannelIdentity.generate().publicKey().equals(a.publicKey())).toBe(false);
  });

  it('rejects secrets of the wrong size', () => {
    expect(() =>
      NoiseChannelIdentity.fromSecrets({
        x25519PrivateKey: new Uint8Array(31),
        mlkem768Seed: new Uint8Array(64),
      }),
    ).toThrow(NoiseKeyGenerationError);
    expect(() =>
      NoiseChannelIdentity.fromSecrets({
        x25519PrivateKey: new Uint8Array(32),
        mlkem768Seed: new Uint8Array(32),
      }),
    ).toThrow('Noise channel key generation failed: the ML-KEM-768 seed must be 64 bytes');
  });
});
