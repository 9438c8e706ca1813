import { describe, expect, it } from '@jest/globals';
import { NoiseChannelIdentity } from '../../src/noise/index.js';
import {
  checkHarnessAuthorization,
  harnessKeyFingerprint,
  issueHarnessAuthorization,
  type HarnessAuthorizationScope,
} from '../../src/rendezvous/index.js';

const secret = new Uint8Array(32).fill(7);
const key = NoiseChannelIdentity.generate().toJSON();
const scope: HarnessAuthorizationScope = {
  environmentId: 'env-1',
  executorRegistrationId: 'registration-1',
  harnessPublicKey: key,
};

describe('harness key authorizations', () => {
  const token = issueHarnessAuthorization(secret, scope, 10_000);

  it('have the v1.<expiry>.<mac> shape and check out for their own scope before expiry', () => {
    expect(token).toMatch(/^v1\.10000\.[A-Za-z0-9_-]{43}$/);
    expect(checkHarnessAuthorization(secret, scope, token, 9_999)).toEqual({
      valid: true,
      expiresAtMs: 10_000,
    });
  });

  it('expire', () => {
    expect(checkHarnessAuthorization(secret, scope, token, 10_000)).toEqual({
      valid: false,
      reason: 'expired',
    });
  });

  it('are bound to environment, registration, harness key and secret', () => {
    const other = NoiseChannelIdentity.generate().toJSON();
    const variants: [HarnessAuthorizationScope, Uint8Array][] = [
      [{ ...scope, environmentId: 'env-2' }, secret],
      [{ ...scope, executorRegistrationId: 'registration-2' }, secret],
      [{ ...scope, harnessPublicKey: other }, secret],
      [scope, new Uint8Array(32).fill(8)],
    ];
    for (const [variant, key] of variants) {
      expect(checkHarnessAuthorization(key, variant, token, 0)).toEqual({
        valid: false,
        reason: 'bad_signature',
      });
    }
  });

  it('accept exactly one spelling of the signature (spare base64 bits count)', () => {
    const mac = token.split('.')[2]!;
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
    const spellings = [...alphabet].map((c) => `v1.10000.${mac.slice(0, -1)}${c}`);
    const accepted = spellings.filter((t) => checkHarnessAuthorization(secret, scope, t, 0).valid);
    expect(accepted).toEqual([token]);
  });

  it('cannot have their expiry extended', () => {
    const extended = token.replace('v1.10000.', 'v1.99999.');
    expect(checkHarnessAuthorization(secret, scope, extended, 0)).toMatchObject({
      reason: 'bad_signature',
    });
  });

  it('reject malformed strings', () => {
    for (const bad of ['', 'v1', 'v2.1.x', `${token}.`, `v1.abc.${token.split('.')[2]}`, 'é']) {
      expect(checkHarnessAuthorization(secret, scope, bad, 0)).toEqual({
        valid: false,
        reason: 'malformed',
      });
    }
  });

  it('fingerprints keys as exact strings', () => {
    expect(harnessKeyFingerprint(key)).toBe(harnessKeyFingerprint({ ...key }));
    expect(harnessKeyFingerprint(key)).not.toBe(
      harnessKeyFingerprint({ ...key, x25519_public_key: key.x25519_public_key.replace(/=$/, '') }),
    );
  });
});
