import { describe, expect, it } from '@jest/globals';
import {
  HYBRID_IK_MESSAGE1_OVERHEAD,
  HYBRID_IK_MESSAGE2_LENGTH,
  NoiseChannelIdentity,
  NoiseDecryptError,
  NoiseHandshakeError,
  NoisePublicKeyError,
  NoiseReplayError,
  NoiseTransportError,
  initiatorHandshake,
  prologue,
  responderHandshake,
  type NoiseChannel,
} from '../../src/noise/index.js';

// Ports of upstream src/noise_channel_tests.rs plus the negative cases of spec/noise-relay.md.
const harness = NoiseChannelIdentity.generate();
const executor = NoiseChannelIdentity.generate();
const streamOne = prologue({
  environmentId: 'env-1',
  executorRegistrationId: 'registration-1',
  streamId: 'stream-1',
});
const streamTwo = prologue({
  environmentId: 'env-1',
  executorRegistrationId: 'registration-1',
  streamId: 'stream-2',
});
const encoder = new TextEncoder();
const decoder = new TextDecoder();

function handshake(authorization = 'harness-key-authorization'): {
  harnessChannel: NoiseChannel;
  executorChannel: NoiseChannel;
} {
  const initiator = initiatorHandshake({
    identity: harness,
    responderPublicKey: executor.publicKey(),
    prologue: streamOne,
    authorization,
  });
  const responder = responderHandshake({
    identity: executor,
    prologue: streamOne,
    message1: initiator.message1,
  });
  const { message2, channel } = responder.accept();
  return { harnessChannel: initiator.finish(message2), executorChannel: channel };
}

function expectHandshakeError(action: () => unknown, reason: string, message?: string): void {
  let caught: unknown;
  try {
    action();
  } catch (error) {
    caught = error;
  }
  expect(caught).toBeInstanceOf(NoiseHandshakeError);
  expect((caught as NoiseHandshakeError).reason).toBe(reason);
  if (message !== undefined) expect((caught as Error).message).toBe(message);
}

describe('hybrid IK handshake', () => {
  it('authenticates both endpoints and carries the authorization (hybrid_ik_roundtrip)', () => {
    const initiator = initiatorHandshake({
      identity: harness,
      responderPublicKey: executor.publicKey().toJSON(),
      prologue: streamOne,
      authorization: 'harness-key-authorization',
    });
    expect(initiator.message1).toHaveLength(HYBRID_IK_MESSAGE1_OVERHEAD + 25);

    const responder = responderHandshake({
      identity: executor,
      prologue: streamOne,
      message1: initiator.message1,
    });
    // The executor sees who is calling, and with which authorization, before it answers.
    expect(responder.initiatorPublicKey.equals(harness.publicKey())).toBe(true);
    expect(responder.initiatorPublicKey.toJSON()).toEqual(harness.publicKey().toJSON());
    expect(responder.authorization).toBe('harness-key-authorization');

    const { message2, channel: executorChannel } = responder.accept();
    expect(message2).toHaveLength(HYBRID_IK_MESSAGE2_LENGTH);
    const harnessChannel = initiator.finish(message2);
    expect(harnessChannel.handshakeHash).toEqual(executorChannel.handshakeHash);
    expect(harnessChannel.remotePublicKey.equals(executor.publicKey())).toBe(true);
    expect(executorChannel.remotePublicKey.equals(harness.publicKey())).toBe(true);

    const request = encoder.encode('{"id":1,"method":"initialize"}');
    const sealed = harnessChannel.send.encrypt(request);
    expect(Buffer.from(sealed).includes(Buffer.from('initialize'))).toBe(false);
    expect(decoder.decode(executorChannel.receive.decrypt(sealed, 0))).toBe(
      '{"id":1,"method":"initialize"}',
    );
    const response = executorChannel.send.encrypt(encoder.encode('{"id":1,"result":{}}'));
    expect(decoder.decode(harnessChannel.receive.decrypt(response))).toBe('{"id":1,"result":{}}');
  });

  it('uses fresh ephemeral keys: two handshakes with the same identities differ', () => {
    const first = handshake();
    const second = handshake();
    expect(first.harnessChannel.handshakeHash).not.toEqual(second.harnessChannel.handshakeHash);
  });

  it('fails at the responder when message 1 was made for another key (initiator_rejects_wrong_responder_key)', () => {
    const someoneElse = NoiseChannelIdentity.generate();
    const initiator = initiatorHandshake({
      identity: harness,
      responderPublicKey: someoneElse.publicKey(),
      prologue: streamOne,
      authorization: 'a',
    });
    expectHandshakeError(
      () =>
        responderHandshake({
          identity: executor,
          prologue: streamOne,
          message1: initiator.message1,
        }),
      'decrypt',
      'Noise channel handshake failed: Cipher error: Decrypt error',
    );
  });

  it('fails at the responder on a mismatched prologue (responder_rejects_mismatched_prologue)', () => {
    const initiator = initiatorHandshake({
      identity: harness,
      responderPublicKey: executor.publicKey(),
      prologue: streamOne,
      authorization: 'a',
    });
    expectHandshakeError(
      () =>
        responderHandshake({
          identity: executor,
          prologue: streamTwo,
          message1: initiator.message1,
        }),
      'decrypt',
    );
  });

  it.each([
    ['the skem ciphertext', 0],
    ['the ephemeral key', 1100],
    ['the encrypted static key', 2310],
    ['the payload', HYBRID_IK_MESSAGE1_OVERHEAD],
  ])('fails at the responder when %s of message 1 is tampered with', (_what, offset) => {
    const initiator = initiatorHandshake({
      identity: harness,
      responderPublicKey: executor.publicKey(),
      prologue: streamOne,
      authorization: 'authorization',
    });
    const tampered = initiator.message1.slice();
    tampered[offset] = (tampered[offset] ?? 0) ^ 0x01;
    expectHandshakeError(
      () => responderHandshake({ identity: executor, prologue: streamOne, message1: tampered }),
      'decrypt',
    );
  });

  it('fails at the initiator when message 2 is tampered with, and refuses a second finish', () => {
    const initiator = initiatorHandshake({
      identity: harness,
      responderPublicKey: executor.publicKey(),
      prologue: streamOne,
      authorization: 'a',
    });
    const { message2 } = responderHandshake({
      identity: executor,
      prologue: streamOne,
      message1: initiator.message1,
    }).accept();
    const tampered = message2.slice();
    tampered[2200] = (tampered[2200] ?? 0) ^ 0x80;
    expectHandshakeError(() => initiator.finish(tampered), 'decrypt');
    expectHandshakeError(() => initiator.finish(message2), 'state');
  });

  it('rejects a message 2 that is truncated or carries a payload', () => {
    const initiator = initiatorHandshake({
      identity: harness,
      responderPublicKey: executor.publicKey(),
      prologue: streamOne,
      authorization: 'a',
    });
    const { message2 } = responderHandshake({
      identity: executor,
      prologue: streamOne,
      message1: initiator.message1,
    }).accept();
    expectHandshakeError(() => initiator.finish(message2.subarray(0, 3000)), 'invalid-message');
  });

  it('rejects a message 2 with a non-empty payload ("handshake response payload must be empty")', async () => {
    // Build a responder that answers with a payload, using the engine directly.
    const { HandshakeState } = await import('../../src/noise/handshakeState.js');
    const { HYBRID_IK_PATTERN } = await import('../../src/noise/handshakePattern.js');
    const { identityKeys } = await import('../../src/noise/identity.js');
    const { platformCryptoProvider } = await import('../../src/noise/platformCryptoProvider.js');
    const initiator = initiatorHandshake({
      identity: harness,
      responderPublicKey: executor.publicKey(),
      prologue: streamOne,
      authorization: 'a',
    });
    const rogue = new HandshakeState({
      pattern: HYBRID_IK_PATTERN,
      role: 'responder',
      crypto: platformCryptoProvider,
      random: (n) => platformCryptoProvider.randomBytes(n),
      prologue: streamOne,
      localStatic: identityKeys(executor),
    });
    rogue.readMessage(initiator.message1);
    const message2 = rogue.writeMessage(encoder.encode('surprise'));
    expectHandshakeError(
      () => initiator.finish(message2),
      'unexpected-payload',
      'Noise channel handshake failed: handshake response payload must be empty',
    );
  });

  it('refuses an oversize authorization on both sides (initiator_rejects_oversized_handshake_payload)', () => {
    expectHandshakeError(
      () =>
        initiatorHandshake({
          identity: harness,
          responderPublicKey: executor.publicKey(),
          prologue: streamOne,
          authorization: new Uint8Array(65535),
        }),
      'payload-too-large',
    );
    expectHandshakeError(
      () =>
        initiatorHandshake({
          identity: harness,
          responderPublicKey: executor.publicKey(),
          prologue: streamOne,
          authorization: 'x'.repeat(4097),
        }),
      'payload-too-large',
    );
    // 4096 bytes is the largest accepted authorization.
    const largest = initiatorHandshake({
      identity: harness,
      responderPublicKey: executor.publicKey(),
      prologue: streamOne,
      authorization: 'x'.repeat(4096),
    });
    expect(
      responderHandshake({ identity: executor, prologue: streamOne, message1: largest.message1 })
        .authorization,
    ).toHaveLength(4096);
    // A message 1 claiming 4097 bytes of payload is refused before any decryption.
    expectHandshakeError(
      () =>
        responderHandshake({
          identity: executor,
          prologue: streamOne,
          message1: new Uint8Array(HYBRID_IK_MESSAGE1_OVERHEAD + 4097),
        }),
      'payload-too-large',
    );
  });

  it('rejects an authorization that is not UTF-8', () => {
    const initiator = initiatorHandshake({
      identity: harness,
      responderPublicKey: executor.publicKey(),
      prologue: streamOne,
      authorization: Uint8Array.of(0xff, 0xfe, 0x41),
    });
    expectHandshakeError(
      () =>
        responderHandshake({
          identity: executor,
          prologue: streamOne,
          message1: initiator.message1,
        }),
      'invalid-authorization',
    );
  });

  it('rejects a truncated message 1 with a size error', () => {
    expectHandshakeError(
      () =>
        responderHandshake({
          identity: executor,
          prologue: streamOne,
          message1: new Uint8Array(100),
        }),
      'invalid-message',
    );
  });

  it('refuses to start with an executor key of another suite (public_key_validation_rejects_unknown_suite)', () => {
    const json = {
      ...executor.publicKey().toJSON(),
      suite: 'Noise_hybridIK_25519+MLKEM768_AESGCM_SHA256',
    };
    expect(() =>
      initiatorHandshake({
        identity: harness,
        responderPublicKey: json,
        prologue: streamOne,
        authorization: 'a',
      }),
    ).toThrow(new NoisePublicKeyError('unsupported Noise channel suite'));
  });

  it('accepts an empty authorization at the Noise layer', () => {
    const initiator = initiatorHandshake({
      identity: harness,
      responderPublicKey: executor.publicKey(),
      prologue: streamOne,
      authorization: '',
    });
    expect(initiator.message1).toHaveLength(HYBRID_IK_MESSAGE1_OVERHEAD);
    expect(
      responderHandshake({ identity: executor, prologue: streamOne, message1: initiator.message1 })
        .authorization,
    ).toBe('');
  });

  it('does not depend on the caller keeping message buffers intact (pooled WebSocket frames)', () => {
    const initiator = initiatorHandshake({
      identity: harness,
      responderPublicKey: executor.publicKey(),
      prologue: streamOne,
      authorization: 'a',
    });
    const frame = Buffer.from(initiator.message1);
    const responder = responderHandshake({
      identity: executor,
      prologue: streamOne,
      message1: frame,
    });
    frame.fill(0); // the frame's memory is reused before the executor answers
    const { message2, channel } = responder.accept();
    const reply = Buffer.from(message2);
    const harnessChannel = initiator.finish(reply);
    reply.fill(0);
    expect(harnessChannel.handshakeHash).toEqual(channel.handshakeHash);
    expect(
      channel.receive.decrypt(Buffer.from(harnessChannel.send.encrypt(Uint8Array.of(7)))),
    ).toEqual(Uint8Array.of(7));
  });

  it('refuses a second accept', () => {
    const initiator = initiatorHandshake({
      identity: harness,
      responderPublicKey: executor.publicKey(),
      prologue: streamOne,
      authorization: 'a',
    });
    const responder = responderHandshake({
      identity: executor,
      prologue: streamOne,
      message1: initiator.message1,
    });
    responder.accept();
    expectHandshakeError(() => responder.accept(), 'state');
  });
});

describe('transport after the handshake', () => {
  it('rejects tampered ciphertext (transport_rejects_tampered_ciphertext)', () => {
    const { harnessChannel, executorChannel } = handshake();
    const sealed = harnessChannel.send.encrypt(encoder.encode('hello'));
    const tampered = sealed.slice();
    tampered[0] = (tampered[0] ?? 0) ^ 0x01;
    expect(() => executorChannel.receive.decrypt(tampered)).toThrow(NoiseDecryptError);
    expect(() => executorChannel.receive.decrypt(tampered)).toThrow(
      'Noise channel transport failed: Cipher error: Decrypt error',
    );
    // A failed record does not consume the counter: the genuine one still opens.
    expect(decoder.decode(executorChannel.receive.decrypt(sealed))).toBe('hello');
  });

  it('rejects a replayed record (transport_rejects_replayed_ciphertext)', () => {
    const { harnessChannel, executorChannel } = handshake();
    const sealed = harnessChannel.send.encrypt(encoder.encode('once'));
    executorChannel.receive.decrypt(sealed);
    // Without a counter the implicit nonce has moved on, so authentication fails.
    expect(() => executorChannel.receive.decrypt(sealed)).toThrow(NoiseTransportError);
    expect(() => executorChannel.receive.decrypt(sealed)).toThrow(NoiseDecryptError);
    // With the relay seq the replay is named as such.
    expect(() => executorChannel.receive.decrypt(sealed, 0)).toThrow(NoiseReplayError);
  });

  it('rejects records out of order and reflected records', () => {
    const { harnessChannel, executorChannel } = handshake();
    const first = harnessChannel.send.encrypt(encoder.encode('0'));
    const second = harnessChannel.send.encrypt(encoder.encode('1'));
    expect(harnessChannel.send.counter).toBe(2);
    expect(() => executorChannel.receive.decrypt(second, 1)).toThrow(
      'Noise channel transport failed: record 1 arrived before record 0; records must be decrypted in order',
    );
    expect(() => executorChannel.receive.decrypt(second)).toThrow(NoiseDecryptError);
    // A record sent back to its sender does not open (each direction has its own key).
    expect(() => harnessChannel.receive.decrypt(first)).toThrow(NoiseDecryptError);
    expect(decoder.decode(executorChannel.receive.decrypt(first, 0))).toBe('0');
    expect(decoder.decode(executorChannel.receive.decrypt(second, 1))).toBe('1');
    expect(executorChannel.receive.counter).toBe(2);
  });

  it('enforces the Noise record size limits', () => {
    const { harnessChannel, executorChannel } = handshake();
    expect(harnessChannel.send.encrypt(new Uint8Array(65535 - 16))).toHaveLength(65535);
    expect(() => harnessChannel.send.encrypt(new Uint8Array(65535 - 15))).toThrow(
      'Noise channel transport failed: transport plaintext is too large',
    );
    expect(() => executorChannel.receive.decrypt(new Uint8Array(15))).toThrow(
      'Noise channel transport failed: transport ciphertext is too short',
    );
    expect(() => executorChannel.receive.decrypt(new Uint8Array(65536))).toThrow(
      'Noise channel transport failed: transport ciphertext is too large',
    );
  });

  it('carries a 61440-byte record (the relay chunk size) and an empty record', () => {
    const { harnessChannel, executorChannel } = handshake();
    const chunk = new Uint8Array(61440).map((_, i) => i % 251);
    const sealed = harnessChannel.send.encrypt(chunk);
    expect(sealed).toHaveLength(61456);
    expect(executorChannel.receive.decrypt(sealed, 0)).toEqual(chunk);
    expect(
      executorChannel.receive.decrypt(harnessChannel.send.encrypt(new Uint8Array(0)), 1),
    ).toEqual(new Uint8Array(0));
  });
});
