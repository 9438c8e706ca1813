import { describe, expect, it } from '@jest/globals';
import {
  NoiseChannelIdentity,
  NoiseHandshakeError,
  initiatorHandshake,
  nobleCryptoProvider,
  platformCryptoProvider,
  prologue,
  responderHandshake,
} from '../../src/noise/index.js';
import { fromHex, hex } from './dummyRng.js';

const node = platformCryptoProvider;
const noble = nobleCryptoProvider;

describe('crypto providers', () => {
  it('agree on X25519 (RFC 7748 §6.1 test vector)', () => {
    const alicePrivate = fromHex(
      '77076d0a7318a57d3c16c17251b26645df4c2f87ebc0992ab177fba51db92c2a',
    );
    const bobPublic = fromHex('de9edb7d7b7dc1b4d35b61c2ece435373f8343c85b78674dadfc7e146f882b4f');
    for (const crypto of [node, noble]) {
      expect(hex(crypto.x25519PublicKey(alicePrivate))).toBe(
        '8520f0098930a754748b7ddcb43ef75a0dbf3a0d26381af4eba4a98eaa9b4e6a',
      );
      expect(hex(crypto.x25519SharedSecret(alicePrivate, bobPublic))).toBe(
        '4a5d9d5ba4ce2de1728e3bf480350f25e07e21c947d19e3376f09b3c1e161742',
      );
    }
  });

  it('both refuse a low-order X25519 point', () => {
    const privateKey = new Uint8Array(32).fill(7);
    for (const crypto of [node, noble]) {
      expect(() => crypto.x25519SharedSecret(privateKey, new Uint8Array(32))).toThrow();
    }
  });

  it('agree on AES-256-GCM, SHA-256 and HMAC-SHA-256', () => {
    const key = new Uint8Array(32).map((_, i) => i);
    const nonce = new Uint8Array(12).fill(1);
    const ad = new TextEncoder().encode('ad');
    const plaintext = new TextEncoder().encode('records and more records');
    const sealed = node.aes256GcmSeal(key, nonce, ad, plaintext);
    expect(hex(noble.aes256GcmSeal(key, nonce, ad, plaintext))).toBe(hex(sealed));
    expect(noble.aes256GcmOpen(key, nonce, ad, sealed)).toEqual(plaintext);
    expect(node.aes256GcmOpen(key, nonce, ad, sealed)).toEqual(plaintext);
    const bad = sealed.slice();
    bad[bad.length - 1] = (bad[bad.length - 1] ?? 0) ^ 1;
    expect(node.aes256GcmOpen(key, nonce, ad, bad)).toBeUndefined();
    expect(noble.aes256GcmOpen(key, nonce, ad, bad)).toBeUndefined();
    expect(node.aes256GcmOpen(key, nonce, new Uint8Array(0), sealed)).toBeUndefined();
    expect(node.aes256GcmOpen(key, nonce, ad, new Uint8Array(5))).toBeUndefined();
    expect(hex(node.sha256(ad, plaintext))).toBe(hex(noble.sha256(ad, plaintext)));
    expect(hex(node.hmacSha256(key, ad, plaintext))).toBe(
      hex(noble.hmacSha256(key, ad, plaintext)),
    );
  });

  it('node randomBytes serves every length, across pool refills, without repeating bytes', () => {
    const seen = new Set<string>();
    // 200 draws of 1..256 bytes span several 4 KiB refills; then a few unpooled sizes.
    const lengths = [...Array.from({ length: 200 }, (_, i) => 1 + ((i * 37) % 256)), 0, 257, 5000];
    for (const length of lengths) {
      const bytes = node.randomBytes(length);
      expect(bytes).toBeInstanceOf(Uint8Array);
      expect(bytes).toHaveLength(length);
      if (length >= 16) {
        // 16 random bytes repeat, or come out all zero, with negligible probability.
        expect(bytes.some((byte) => byte !== 0)).toBe(true);
        const key = hex(bytes.subarray(0, 16));
        expect(seen.has(key)).toBe(false);
        seen.add(key);
      }
    }
  });

  it('agree on SHA-256 of no parts, empty parts and inputs around the one-shot size limit', () => {
    const cases: Uint8Array[][] = [
      [],
      [new Uint8Array(0)],
      [node.randomBytes(32), node.randomBytes(4064)], // exactly 4096 bytes
      [node.randomBytes(32), node.randomBytes(4065)], // one more: the streaming path
      [node.randomBytes(70_000)],
    ];
    for (const parts of cases) {
      expect(hex(node.sha256(...parts))).toBe(hex(noble.sha256(...parts)));
    }
    // The scratch buffer behind the one-shot path leaks nothing into the next hash.
    expect(hex(node.sha256(new Uint8Array(3)))).toBe(hex(noble.sha256(new Uint8Array(3))));
  });

  it('agree on AES-256-GCM for empty and full-size records under one reused key', () => {
    const key = node.randomBytes(32);
    const lengths = [0, 1, 4096, 65535 - 16];
    lengths.forEach((length, counter) => {
      const nonce = new Uint8Array(12);
      nonce[11] = counter;
      const plaintext = node.randomBytes(length);
      const sealed = node.aes256GcmSeal(key, nonce, new Uint8Array(0), plaintext);
      expect(sealed.length).toBe(length + 16);
      expect(hex(noble.aes256GcmSeal(key, nonce, new Uint8Array(0), plaintext))).toBe(hex(sealed));
      expect(node.aes256GcmOpen(key, nonce, new Uint8Array(0), sealed)).toEqual(plaintext);
      // The same key bytes in another array (no cached key object) open it too.
      expect(node.aes256GcmOpen(key.slice(), nonce, new Uint8Array(0), sealed)).toEqual(plaintext);
      const otherKey = key.slice();
      otherKey[0] = (otherKey[0] ?? 0) ^ 1;
      expect(node.aes256GcmOpen(otherKey, nonce, new Uint8Array(0), sealed)).toBeUndefined();
    });
  });

  it('interoperate: a node initiator and a noble responder complete a handshake', () => {
    const harness = NoiseChannelIdentity.generate();
    const executor = NoiseChannelIdentity.generate({ crypto: noble });
    const bytes = prologue({ environmentId: 'e', executorRegistrationId: 'r', streamId: 's' });
    const initiator = initiatorHandshake({
      identity: harness,
      responderPublicKey: executor.publicKey(),
      prologue: bytes,
      authorization: 'auth',
      crypto: node,
    });
    const responder = responderHandshake({
      identity: executor,
      prologue: bytes,
      message1: initiator.message1,
      crypto: noble,
    });
    const { message2, channel } = responder.accept();
    const harnessChannel = initiator.finish(message2);
    expect(harnessChannel.handshakeHash).toEqual(channel.handshakeHash);
    expect(channel.receive.decrypt(harnessChannel.send.encrypt(Uint8Array.of(1, 2, 3)))).toEqual(
      Uint8Array.of(1, 2, 3),
    );
  });

  it('turns a low-order executor X25519 key into a handshake error, not a crash', () => {
    const executor = NoiseChannelIdentity.generate();
    const json = {
      ...executor.publicKey().toJSON(),
      x25519_public_key: Buffer.alloc(32).toString('base64'),
    };
    for (const crypto of [node, noble]) {
      let caught: unknown;
      try {
        initiatorHandshake({
          identity: NoiseChannelIdentity.generate(),
          responderPublicKey: json,
          prologue: new Uint8Array(0),
          authorization: 'a',
          crypto,
        });
      } catch (error) {
        caught = error;
      }
      expect(caught).toBeInstanceOf(NoiseHandshakeError);
      expect((caught as NoiseHandshakeError).reason).toBe('key-agreement');
    }
  });

  it('turns a malformed ML-KEM-768 executor key into a handshake error, not a crash', () => {
    const executor = NoiseChannelIdentity.generate();
    // Coefficients of 0xfff exceed the modulus q = 3329: FIPS 203's encapsulation-key check fails.
    const json = {
      ...executor.publicKey().toJSON(),
      mlkem768_public_key: Buffer.alloc(1184, 0xff).toString('base64'),
    };
    let caught: unknown;
    try {
      initiatorHandshake({
        identity: NoiseChannelIdentity.generate(),
        responderPublicKey: json,
        prologue: new Uint8Array(0),
        authorization: 'a',
      });
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(NoiseHandshakeError);
    expect((caught as NoiseHandshakeError).reason).toBe('key-agreement');
  });
});
