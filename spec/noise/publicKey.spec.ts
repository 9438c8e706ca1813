import { describe, expect, it } from '@jest/globals';
import {
  NOISE_CHANNEL_SUITE,
  NoiseChannelIdentity,
  NoiseChannelPublicKey,
  NoisePublicKeyError,
  noiseChannelPublicKeyJsonSchema,
} from '../../src/noise/index.js';

const key = NoiseChannelIdentity.generate().publicKey();
const json = key.toJSON();

function parseError(value: unknown): NoisePublicKeyError {
  try {
    NoiseChannelPublicKey.fromJSON(value);
  } catch (error) {
    expect(error).toBeInstanceOf(NoisePublicKeyError);
    return error as NoisePublicKeyError;
  }
  throw new Error('expected the key to be rejected');
}

describe('NoiseChannelPublicKey', () => {
  it('serializes with the suite label and canonical padded base64 (public_key_serializes_with_expected_suite)', () => {
    expect(Object.keys(json)).toEqual(['suite', 'x25519_public_key', 'mlkem768_public_key']);
    expect(json.suite).toBe(NOISE_CHANNEL_SUITE);
    expect(json.suite).toBe('Noise_hybridIK_X25519+MLKEM768_AESGCM_SHA256');
    expect(json.x25519_public_key).toHaveLength(44);
    expect(json.mlkem768_public_key).toHaveLength(1580);
    expect(JSON.parse(JSON.stringify(key))).toEqual(json);
  });

  it('round-trips through JSON and compares by value', () => {
    const parsed = NoiseChannelPublicKey.fromJSON(JSON.parse(JSON.stringify(json)));
    expect(parsed.equals(key)).toBe(true);
    expect(parsed.toJSON()).toEqual(json);
    expect(parsed.equals(NoiseChannelIdentity.generate().publicKey())).toBe(false);
  });

  it('rejects unknown and missing fields', () => {
    expect(parseError({ ...json, extra: 1 }).message).toMatch(
      /^invalid Noise channel public key: /,
    );
    expect(
      parseError({ suite: json.suite, x25519_public_key: json.x25519_public_key }).message,
    ).toMatch(/mlkem768_public_key/);
    parseError('not an object');
    parseError(null);
    // The wire schema alone also refuses unknown fields (deny_unknown_fields).
    expect(noiseChannelPublicKeyJsonSchema.safeParse({ ...json, extra: 1 }).success).toBe(false);
  });

  it('rejects another suite, including the protocol name used as a label', () => {
    expect(
      parseError({ ...json, suite: 'Noise_hybridIK_25519+MLKEM768_AESGCM_SHA256' }).message,
    ).toBe('invalid Noise channel public key: unsupported Noise channel suite');
    expect(parseError({ ...json, suite: 'Noise_IK_25519_AESGCM_SHA256' }).detail).toBe(
      'unsupported Noise channel suite',
    );
  });

  it('rejects bad base64 and wrong lengths with distinct messages', () => {
    expect(parseError({ ...json, x25519_public_key: 'not base64!' }).detail).toBe(
      'invalid X25519 public key',
    );
    // Missing padding and non-zero trailing bits are not canonical (Rust's STANDARD engine).
    expect(
      parseError({ ...json, x25519_public_key: json.x25519_public_key.slice(0, 43) }).detail,
    ).toBe('invalid X25519 public key');
    // 43 characters carry 258 bits; the 2 spare bits of 'B' are non-zero.
    expect(Buffer.from(`${'A'.repeat(42)}B=`, 'base64')).toHaveLength(32);
    expect(parseError({ ...json, x25519_public_key: `${'A'.repeat(42)}B=` }).detail).toBe(
      'invalid X25519 public key',
    );
    expect(parseError({ ...json, x25519_public_key: ` ${json.x25519_public_key}` }).detail).toBe(
      'invalid X25519 public key',
    );
    expect(parseError({ ...json, mlkem768_public_key: '%%%%' }).detail).toBe(
      'invalid ML-KEM-768 public key',
    );
    expect(
      parseError({ ...json, x25519_public_key: Buffer.alloc(31).toString('base64') }).detail,
    ).toBe('invalid X25519 public key length');
    expect(
      parseError({ ...json, mlkem768_public_key: Buffer.alloc(1183).toString('base64') }).detail,
    ).toBe('invalid ML-KEM-768 public key length');
  });

  it('copies raw bytes in and out so callers cannot change a key', () => {
    const x = key.x25519PublicKey;
    x[0] = (x[0] ?? 0) ^ 0xff;
    expect(key.x25519PublicKey).not.toEqual(x);
    expect(() => NoiseChannelPublicKey.fromRaw(new Uint8Array(32), new Uint8Array(10))).toThrow(
      'invalid Noise channel public key: invalid ML-KEM-768 public key length',
    );
  });
});
