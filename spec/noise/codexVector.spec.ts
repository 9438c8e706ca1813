import { describe, expect, it } from '@jest/globals';
import type { NoiseCryptoProvider } from '../../src/noise/cryptoProvider.js';
import {
  NOISE_CHANNEL_SUITE,
  NOISE_PROTOCOL_NAME,
  NoiseChannelIdentity,
  NoiseChannelPublicKey,
  initiatorHandshake,
  nobleCryptoProvider,
  platformCryptoProvider,
  prologue,
  responderHandshake,
} from '../../src/noise/index.js';
import { loadCodexVector } from './codexVector.js';
import { dummyRng, fromHex, hex } from './dummyRng.js';

// The relay frames in the vector (relay_frames_protobuf_hex) belong to the relay layer's specs.
const vector = loadCodexVector();

describe.each<[string, NoiseCryptoProvider]>([
  ['node', platformCryptoProvider],
  ['noble', nobleCryptoProvider],
])('codex hybrid IK vector with the %s provider', (_name, crypto) => {
  it('uses the two distinct name strings of the vector', () => {
    expect(NOISE_PROTOCOL_NAME).toBe(vector.noise_protocol_name_hashed_into_h);
    expect(NOISE_CHANNEL_SUITE).toBe(vector.suite_label_in_public_key_json);
    expect(hex(crypto.sha256(new TextEncoder().encode(NOISE_PROTOCOL_NAME)))).toBe(
      '646856ce6fda9f9f037c69557c3c9f5ada7d1bc70b0c4beea72befcaf862edfa',
    );
  });

  it('reproduces the prologue', () => {
    const bytes = prologue({
      environmentId: vector.environment_id,
      executorRegistrationId: vector.executor_registration_id,
      streamId: vector.stream_id,
    });
    expect(bytes).toHaveLength(119);
    expect(hex(bytes)).toBe(vector.prologue_hex);
  });

  it('reproduces every handshake and transport byte from the DummyRng draws', () => {
    const random = dummyRng();
    const drawsAt: Record<string, string> = {};
    const draw = (label: string, length: number): Uint8Array => {
      drawsAt[label] = random.counter().toString(16);
      return random(length);
    };
    // Static keys: draw order harness X25519, executor X25519, harness ML-KEM, executor ML-KEM.
    const harnessX25519 = draw('harness static X25519 private key', 32);
    const executorX25519 = draw('executor static X25519 private key', 32);
    const harnessSeed = draw('harness static ML-KEM-768 seed d||z', 64);
    const executorSeed = draw('executor static ML-KEM-768 seed d||z', 64);
    expect(hex(harnessX25519)).toBe(vector.harness.x25519_private_hex);
    expect(hex(executorX25519)).toBe(vector.executor.x25519_private_hex);
    expect(hex(harnessSeed)).toBe(vector.harness.mlkem768_seed_d_z_hex);
    expect(hex(executorSeed)).toBe(vector.executor.mlkem768_seed_d_z_hex);
    for (const [label, counter] of Object.entries(drawsAt)) {
      expect(vector.rng_draws_in_order.find((d) => d.label === label)?.first_counter).toBe(counter);
    }

    const harness = NoiseChannelIdentity.fromSecrets(
      { x25519PrivateKey: harnessX25519, mlkem768Seed: harnessSeed },
      { crypto },
    );
    const executor = NoiseChannelIdentity.fromSecrets(
      { x25519PrivateKey: executorX25519, mlkem768Seed: executorSeed },
      { crypto },
    );
    expect(hex(harness.publicKey().x25519PublicKey)).toBe(vector.harness.x25519_public_hex);
    expect(hex(harness.publicKey().mlkem768PublicKey)).toBe(vector.harness.mlkem768_public_hex);
    expect(hex(executor.publicKey().x25519PublicKey)).toBe(vector.executor.x25519_public_hex);
    expect(hex(executor.publicKey().mlkem768PublicKey)).toBe(vector.executor.mlkem768_public_hex);
    expect(harness.publicKey().toJSON()).toEqual(vector.harness.public_key_json);
    expect(executor.publicKey().toJSON()).toEqual(vector.executor.public_key_json);

    const bytes = fromHex(vector.prologue_hex);
    // The harness pins the executor key exactly as the connect bundle carries it (JSON).
    const initiator = initiatorHandshake({
      identity: harness,
      responderPublicKey: NoiseChannelPublicKey.fromJSON(vector.executor.public_key_json),
      prologue: bytes,
      authorization: vector.harness_key_authorization,
      crypto,
      random,
    });
    expect(initiator.message1).toHaveLength(vector.msg1_len);
    expect(hex(initiator.message1)).toBe(vector.msg1_hex);

    const responder = responderHandshake({
      identity: executor,
      prologue: bytes,
      message1: fromHex(vector.msg1_hex),
      crypto,
      random,
    });
    expect(responder.authorization).toBe(vector.harness_key_authorization);
    expect(responder.initiatorPublicKey.toJSON()).toEqual(vector.harness.public_key_json);
    expect(responder.initiatorPublicKey.equals(harness.publicKey())).toBe(true);

    const { message2, channel: executorChannel } = responder.accept();
    expect(message2).toHaveLength(vector.msg2_len);
    expect(hex(message2)).toBe(vector.msg2_hex);
    expect(random.counter().toString(16)).toBe('deadc0cf'); // last draw: 64 bytes from deadc08f

    const harnessChannel = initiator.finish(fromHex(vector.msg2_hex));
    expect(hex(harnessChannel.handshakeHash)).toBe(vector.handshake_hash_hex);
    expect(hex(executorChannel.handshakeHash)).toBe(vector.handshake_hash_hex);
    expect(harnessChannel.remotePublicKey.equals(executor.publicKey())).toBe(true);

    const [toExecutor, toHarness] = vector.transport;
    if (toExecutor === undefined || toHarness === undefined)
      throw new Error('vector lacks records');
    expect(toExecutor.direction).toBe('harness->executor');
    expect(hex(harnessChannel.send.encrypt(fromHex(toExecutor.plaintext_record_hex)))).toBe(
      toExecutor.ciphertext_hex,
    );
    expect(
      hex(executorChannel.receive.decrypt(fromHex(toExecutor.ciphertext_hex), toExecutor.nonce)),
    ).toBe(toExecutor.plaintext_record_hex);
    expect(toHarness.direction).toBe('executor->harness');
    expect(hex(executorChannel.send.encrypt(fromHex(toHarness.plaintext_record_hex)))).toBe(
      toHarness.ciphertext_hex,
    );
    expect(
      hex(harnessChannel.receive.decrypt(fromHex(toHarness.ciphertext_hex), toHarness.nonce)),
    ).toBe(toHarness.plaintext_record_hex);
  });
});
