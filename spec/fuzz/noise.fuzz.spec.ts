/**
 * Fuzzing the Noise channel's inputs from the network: handshake messages 1 and 2 and
 * transport records. Anything but the exact bytes a peer wrote gives a typed Noise error
 * (never another throw, never a channel), and a failed record leaves the cipher usable for
 * the genuine one.
 */
import { describe, expect, it, jest } from '@jest/globals';
import fc from 'fast-check';
import {
  NoiseChannelError,
  NoiseChannelIdentity,
  NoiseHandshakeError,
  NoiseTransportError,
  initiatorHandshake,
  prologue,
  responderHandshake,
} from '../../src/noise/index.js';
import { bytes, fuzzParameters, fuzzTimeoutMs, mutated } from './fuzzRuns.js';

jest.setTimeout(fuzzTimeoutMs());

const harness = NoiseChannelIdentity.generate();
const executor = NoiseChannelIdentity.generate();
const streamPrologue = prologue({
  environmentId: 'env-fuzz',
  executorRegistrationId: 'registration-fuzz',
  streamId: 'stream-fuzz',
});

function start(): ReturnType<typeof initiatorHandshake> {
  return initiatorHandshake({
    identity: harness,
    responderPublicKey: executor.publicKey(),
    prologue: streamPrologue,
    authorization: 'authorization',
  });
}

function equalBytes(a: Uint8Array, b: Uint8Array): boolean {
  return Buffer.from(a).equals(Buffer.from(b));
}

/** Runs `action`; a throw must be a NoiseChannelError (of `type` when given). */
function typed<T>(
  action: () => T,
  type: abstract new (...args: never[]) => Error = NoiseChannelError,
): T | undefined {
  try {
    return action();
  } catch (error) {
    expect(error).toBeInstanceOf(type);
    return undefined;
  }
}

const message1 = start().message1;

describe('fuzz: Noise handshake messages', () => {
  it('refuses any message 1 but the one written, with a NoiseHandshakeError', () => {
    fc.assert(
      fc.property(fc.oneof(mutated(message1), bytes(4000)), (input) => {
        const responder = typed(
          () =>
            responderHandshake({ identity: executor, prologue: streamPrologue, message1: input }),
          NoiseHandshakeError,
        );
        if (responder !== undefined) expect(equalBytes(input, message1)).toBe(true);
      }),
      fuzzParameters(10),
    );
  });

  it('refuses any message 2 but the one written, with a NoiseHandshakeError', () => {
    fc.assert(
      fc.property(fc.nat(), fc.boolean(), (seed, junk) => {
        // A fresh handshake per case (finishing is single-use), its message 2 damaged.
        const initiator = start();
        const { message2 } = responderHandshake({
          identity: executor,
          prologue: streamPrologue,
          message1: initiator.message1,
        }).accept();
        const [input] = fc.sample(junk ? bytes(3500) : mutated(message2), { numRuns: 1, seed });
        const channel = typed(() => initiator.finish(input!), NoiseHandshakeError);
        if (channel !== undefined) expect(equalBytes(input!, message2)).toBe(true);
      }),
      fuzzParameters(10),
    );
  });
});

describe('fuzz: Noise transport records', () => {
  it('refuses damaged records with a NoiseTransportError and still opens the genuine one', () => {
    const initiator = start();
    const accepted = responderHandshake({
      identity: executor,
      prologue: streamPrologue,
      message1: initiator.message1,
    }).accept();
    const harnessChannel = initiator.finish(accepted.message2);
    const executorChannel = accepted.channel;
    fc.assert(
      fc.property(
        fc.uint8Array({ maxLength: 2000 }),
        fc.array(bytes(100), { maxLength: 3 }),
        fc.nat(),
        (plaintext, junk, pick) => {
          const record = harnessChannel.send.encrypt(plaintext);
          const forgeries = [...junk, ...fc.sample(mutated(record), { numRuns: 2, seed: pick })];
          for (const forged of forgeries) {
            if (equalBytes(forged, record)) continue;
            typed(() => executorChannel.receive.decrypt(forged), NoiseTransportError);
          }
          // Replaying an older counter is refused by number, not by decryption.
          const counter = executorChannel.receive.counter;
          if (counter > 0)
            typed(() => executorChannel.receive.decrypt(record, counter - 1), NoiseTransportError);
          expect(Array.from(executorChannel.receive.decrypt(record, counter))).toEqual(
            Array.from(plaintext),
          );
        },
      ),
      fuzzParameters(2),
    );
  });
});
