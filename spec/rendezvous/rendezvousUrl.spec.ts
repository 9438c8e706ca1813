import { describe, expect, it } from '@jest/globals';
import { signRendezvousUrl, verifyRendezvousUrl } from '../../src/rendezvous/index.js';

const secret = new Uint8Array(32).fill(1);
const NOW = 1_000_000;
const claims = {
  role: 'harness',
  environmentId: 'env/1 ü',
  registrationId: 'reg-1',
  expiresAtMs: NOW + 60_000,
} as const;
const target = (url: string): string => {
  const parsed = new URL(url);
  return `${parsed.pathname}${parsed.search}`;
};

describe('rendezvous URLs', () => {
  const url = signRendezvousUrl('ws://127.0.0.1:9', secret, claims);

  it('carry role, registration, expiry and sig, and verify to the same claims', () => {
    expect(url).toMatch(
      /^ws:\/\/127\.0\.0\.1:9\/ws\/environment\/env%2F1%20%C3%BC\?role=harness&registration=reg-1&exp=1060000&sig=/,
    );
    expect(verifyRendezvousUrl(target(url), secret, NOW)).toEqual({ ok: true, claims });
  });

  it('expire at their expiry, and the expiry cannot be moved', () => {
    expect(verifyRendezvousUrl(target(url), secret, NOW + 60_000)).toEqual({
      ok: false,
      problem: 'expired',
    });
    const extended = target(url).replace('exp=1060000', 'exp=9060000');
    expect(verifyRendezvousUrl(extended, secret, NOW)).toEqual({
      ok: false,
      problem: 'bad_signature',
    });
    const missing = target(url).replace('exp=1060000&', '');
    expect(verifyRendezvousUrl(missing, secret, NOW)).toEqual({
      ok: false,
      problem: 'bad_signature',
    });
  });

  it('refuse a changed role, environment or registration, and another secret', () => {
    const tampered = [
      target(url).replace('role=harness', 'role=environment'),
      target(url).replace('env%2F1', 'env%2F2'),
      target(url).replace('registration=reg-1', 'registration=reg-2'),
    ];
    for (const request of tampered) {
      expect(verifyRendezvousUrl(request, secret, NOW)).toEqual({
        ok: false,
        problem: 'bad_signature',
      });
    }
    expect(verifyRendezvousUrl(target(url), new Uint8Array(32), NOW)).toEqual({
      ok: false,
      problem: 'bad_signature',
    });
    expect(verifyRendezvousUrl(target(url).replace(/&sig=.*/, ''), secret, NOW)).toEqual({
      ok: false,
      problem: 'bad_signature',
    });
  });

  it('answer not_found for other paths', () => {
    for (const request of ['/', '/ws/environment/', '/ws/environment/a/b?role=harness', '/x']) {
      expect(verifyRendezvousUrl(request, secret, NOW)).toEqual({
        ok: false,
        problem: 'not_found',
      });
    }
  });
});
