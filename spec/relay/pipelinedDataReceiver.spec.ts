import { describe, expect, it } from '@jest/globals';
import { CipherState } from '../../src/noise/cipherState.js';
import { NoiseDecryptError } from '../../src/noise/errors.js';
import { platformCryptoProvider } from '../../src/noise/platformCryptoProvider.js';
import { TransportCipher } from '../../src/noise/transportCipher.js';
import { webCryptoAes256GcmOpener } from '../../src/platform/browser/webCryptoAesGcm.js';
import { RelayDataReceiver, RelayDataSender } from '../../src/relay/dataStream.js';
import type { RelayDataFrame } from '../../src/relay/frames.js';
import { PipelinedRelayDataReceiver } from '../../src/relay/pipelinedDataReceiver.js';
import { RelayProtocolError } from '../../src/relay/relayProtocolError.js';

/**
 * The asynchronous receive path (WebCrypto's AES-GCM, as browsers use it; Node has
 * `crypto.subtle` too) against the synchronous one (node:crypto) on the same real AES-256-GCM
 * records: same messages, same error on a tampered record, results in frame order.
 */
const opener = webCryptoAes256GcmOpener();
const key = platformCryptoProvider.randomBytes(32);
const decoder = new TextDecoder();

function syncReceiver(): RelayDataReceiver {
  return new RelayDataReceiver(
    new TransportCipher(new CipherState(platformCryptoProvider, key.slice())),
  );
}

function pipelinedReceiver(): PipelinedRelayDataReceiver {
  const cipher = new TransportCipher(
    new CipherState({ ...platformCryptoProvider, aes256GcmOpener: opener! }, key.slice()),
  );
  expect(cipher.decryptsAsync).toBe(true);
  return new PipelinedRelayDataReceiver(cipher);
}

/** Small and multi-record messages (the largest spans several 64 KiB records). */
function frames(): RelayDataFrame[] {
  const sender = new RelayDataSender(
    'stream-1',
    new TransportCipher(new CipherState(platformCryptoProvider, key.slice())),
  );
  const messages = [
    '{"id":1}',
    JSON.stringify({ method: 'process/output', params: { chunk: 'x'.repeat(40_000) } }),
    JSON.stringify({ id: 2, result: { data: 'y'.repeat(200_000) } }),
    ...Array.from({ length: 50 }, (_, i) => JSON.stringify({ id: 3 + i, result: {} })),
  ];
  return messages.flatMap((message) => sender.send(message));
}

/** What the synchronous receiver returns or throws for each frame, until the first throw. */
function syncOutcomes(input: RelayDataFrame[]): Array<string[] | Error> {
  const receiver = syncReceiver();
  const outcomes: Array<string[] | Error> = [];
  for (const frame of input) {
    try {
      outcomes.push(receiver.receive(frame).map((bytes) => decoder.decode(bytes)));
    } catch (error) {
      outcomes.push(error as Error);
      break;
    }
  }
  return outcomes;
}

/** Every frame handed over at once (decryptions overlap); outcomes in the order they settle. */
async function pipelinedOutcomes(
  input: RelayDataFrame[],
): Promise<{ outcomes: Array<string[] | Error>; settled: number[] }> {
  const receiver = pipelinedReceiver();
  const settled: number[] = [];
  const outcomes = await Promise.all(
    input.map((frame, index) =>
      receiver.receive(frame).then(
        (messages) => {
          settled.push(index);
          return messages.map((bytes) => decoder.decode(bytes));
        },
        (error: unknown) => {
          settled.push(index);
          return error as Error;
        },
      ),
    ),
  );
  return { outcomes, settled };
}

function tampered(input: RelayDataFrame[], index: number): RelayDataFrame[] {
  const copy = [...input];
  const payload = copy[index]!.payload.slice();
  payload[payload.length - 1]! ^= 1; // inside the tag
  copy[index] = { ...copy[index]!, payload };
  return copy;
}

describe('PipelinedRelayDataReceiver (WebCrypto AES-GCM)', () => {
  it('has crypto.subtle to run on', () => {
    expect(opener).toBeDefined();
  });

  it('yields the same messages as the synchronous receiver, settling in frame order', async () => {
    const input = frames();
    expect(input.length).toBeGreaterThan(55);
    const expected = syncOutcomes(input);
    const { outcomes, settled } = await pipelinedOutcomes(input);
    expect(outcomes).toEqual(expected);
    expect(settled).toEqual(input.map((_, index) => index));
  });

  it('keeps order when frames arrive out of order within the reorder window', async () => {
    const input = frames();
    const swapped = [input[1]!, input[0]!, ...input.slice(2)];
    const { outcomes } = await pipelinedOutcomes(swapped);
    expect(outcomes).toEqual(syncOutcomes(swapped));
    expect(outcomes.flat()).toEqual(syncOutcomes(input).flat());
  });

  it('fails a tampered record with the synchronous error, and delivers nothing after it', async () => {
    const input = tampered(frames(), 10);
    const expected = syncOutcomes(input);
    expect(expected).toHaveLength(11);
    const failure = expected[10] as Error;
    expect(failure).toBeInstanceOf(RelayProtocolError);
    expect(failure.cause).toBeInstanceOf(NoiseDecryptError);

    const { outcomes } = await pipelinedOutcomes(input);
    expect(outcomes.slice(0, 10)).toEqual(expected.slice(0, 10));
    for (const outcome of outcomes.slice(10)) {
      expect(outcome).toBeInstanceOf(RelayProtocolError);
      expect((outcome as Error).message).toBe(failure.message);
      expect((outcome as Error).cause).toBeInstanceOf(NoiseDecryptError);
    }
  });

  it('fails a too-short record with the synchronous error', async () => {
    const input = frames().slice(0, 3);
    input[1] = { ...input[1]!, payload: new Uint8Array(5) };
    const expected = syncOutcomes(input);
    const { outcomes } = await pipelinedOutcomes(input);
    expect(outcomes[0]).toEqual(expected[0]);
    expect((outcomes[1] as Error).message).toBe((expected[1] as Error).message);
    expect((outcomes[2] as Error).message).toBe((expected[1] as Error).message);
  });
});
