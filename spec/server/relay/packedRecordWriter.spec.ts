import { describe, expect, it } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { aesGcmNonce, CipherState, MAX_NONCE } from '../../../src/noise/cipherState.js';
import {
  nobleCryptoProvider,
  platformCryptoProvider,
  TransportCipher,
  type NoiseCryptoProvider,
} from '../../../src/noise/index.js';
import {
  decodeRelayFrame,
  encodeRelayFrame,
  MAX_NOISE_JSONRPC_MESSAGE_LEN,
  RelayDataReceiver,
  RelayProtocolError,
  type RelayDataFrame,
  type RelayTraceContext,
} from '../../../src/relay/index.js';
import {
  PACKED_SCRATCH_BYTES,
  PackedRecordWriter,
  utf8Length,
  type OutboundText,
  type SealedFrameSink,
} from '../../../src/server/relay/packedRecordWriter.js';
import type { SplitText } from '../../../src/server/splitText.js';
import { NoiseRecordSender } from '../../../src/transport/noiseRecordSender.js';

const key = new Uint8Array(randomBytes(32));
const cipher = (crypto: NoiseCryptoProvider = platformCryptoProvider): TransportCipher =>
  new TransportCipher(new CipherState(crypto, key));

/**
 * Hands out one buffer over and over (as a pool would once frames are written) and copies each
 * frame as it is sent, so reuse of frame buffers is part of what is checked.
 */
class RecordingSink implements SealedFrameSink {
  readonly frames: Buffer[] = [];
  readonly requested: number[] = [];
  private readonly reused = Buffer.alloc(64 * 1024, 0xee);

  frameBuffer(length: number): Buffer {
    this.requested.push(length);
    return length <= this.reused.length ? this.reused : Buffer.alloc(length, 0xee);
  }

  sendFrame(frame: Buffer, buffer: Buffer): void {
    expect(frame.buffer).toBe(buffer.buffer);
    expect(frame.byteOffset).toBe(buffer.byteOffset);
    this.frames.push(Buffer.from(frame));
  }
}

function split(text: string, asciiStart: number, asciiEnd: number): SplitText {
  return {
    head: text.slice(0, asciiStart),
    ascii: text.slice(asciiStart, asciiEnd),
    tail: text.slice(asciiEnd),
  };
}

function joined(text: OutboundText): string {
  return typeof text === 'string' ? text : text.head + text.ascii + text.tail;
}

function output(seq: number, bytes: number): SplitText {
  const head = `{"method":"process/output","params":{"processId":"pé","seq":${seq},"stream":"stdout","chunk":"`;
  return { head, ascii: randomBytes(bytes).toString('base64'), tail: '"}}' };
}

function dataFrameOf(bytes: Uint8Array): RelayDataFrame {
  const frame = decodeRelayFrame(bytes);
  if (frame.kind !== 'data') throw new Error(`expected a data frame, got ${frame.kind}`);
  return frame;
}

/** The writer's frames next to `NoiseRecordSender.sendPacked`'s for the same texts. */
function bothWays(texts: OutboundText[], trace?: RelayTraceContext) {
  const sink = new RecordingSink();
  new PackedRecordWriter('stream-1', cipher(), sink).write(texts, texts.map(utf8Length), trace);
  const reference = new NoiseRecordSender('stream-1', cipher())
    .sendPacked(texts.map(joined), trace)
    .map((frame) => Buffer.from(encodeRelayFrame(frame)));
  return { sink, ours: sink.frames, reference };
}

describe('PackedRecordWriter', () => {
  it.each([
    ['one small reply', [`{"id":1,"result":{}}`]],
    ['multi-byte texts, whole and split', ['{"x":"é😀"}', split('{"x":"ü","y":"abc"}', 13, 16)]],
    ['a turn of output (8 chunks of 8 KiB)', Array.from({ length: 8 }, (_, i) => output(i, 8192))],
    [
      'output spanning many records',
      Array.from({ length: 40 }, (_, i) => output(i, 8192 + (i % 7) * 13)),
    ],
  ])('sends frames byte-identical to sendPacked: %s', (_name, texts) => {
    const { ours, reference } = bothWays(texts);
    expect(ours.length).toBe(reference.length);
    ours.forEach((frame, index) => expect(frame.equals(reference[index]!)).toBe(true));
  });

  it('puts the trace on the first frame only, identical to sendPacked', () => {
    const texts = [
      `{"id":3,"method":"m","trace":{"traceparent":"tp"},"x":"${'a'.repeat(70_000)}"}`,
    ];
    const { ours, reference } = bothWays(texts, { traceparent: 'tp', tracestate: 'ts' });
    expect(ours).toHaveLength(2);
    ours.forEach((frame, index) => expect(frame.equals(reference[index]!)).toBe(true));
    const frames = ours.map((frame) => dataFrameOf(frame));
    expect(frames[0]).toMatchObject({ traceparent: 'tp', tracestate: 'ts' });
    expect(frames[1]).not.toHaveProperty('traceparent');
  });

  it('packs a batch larger than its scratch buffer in a buffer of its own', () => {
    const big = `{"x":"${'b'.repeat(PACKED_SCRATCH_BYTES + 1000)}"}`;
    const texts = [output(1, 100), big, output(2, 100)];
    const { ours, reference } = bothWays(texts);
    expect(ours.length).toBe(reference.length);
    ours.forEach((frame, index) => expect(frame.equals(reference[index]!)).toBe(true));
  });

  it('round-trips through the receiver, in order, across batches', () => {
    const sink = new RecordingSink();
    const writer = new PackedRecordWriter('s', cipher(), sink);
    const batches = [
      Array.from({ length: 9 }, (_, i) => output(i, 8192)),
      ['{"id":7,"result":"é"}'],
      Array.from({ length: 3 }, (_, i) => output(9 + i, 30_000)),
    ];
    for (const texts of batches) writer.write(texts, texts.map(utf8Length));
    const receiver = new RelayDataReceiver(cipher());
    const received = sink.frames.flatMap((frame) =>
      receiver
        .receive(decodeRelayFrame(frame) as never)
        .map((bytes) => Buffer.from(bytes).toString('utf8')),
    );
    expect(received).toEqual(batches.flat().map(joined));
    expect(sink.frames.map((frame) => (decodeRelayFrame(frame) as { seq: number }).seq)).toEqual(
      sink.frames.map((_, index) => index),
    );
  });

  it.each([
    ['an empty text', [''], [0], /invalid length/],
    ['an oversize text', ['{}'], [MAX_NOISE_JSONRPC_MESSAGE_LEN + 1], /exceeds maximum length/],
  ])('refuses %s before sealing anything', (_name, texts, lengths, message) => {
    const sink = new RecordingSink();
    const sending = cipher();
    const writer = new PackedRecordWriter('s', sending, sink);
    expect(() => writer.write(['{"id":1}', ...texts], [8, ...lengths])).toThrow(RelayProtocolError);
    expect(() => writer.write(texts, lengths)).toThrow(message);
    expect(sink.requested).toEqual([]);
    expect(sending.counter).toBe(0);
  });

  it('refuses a non-canonical stream id', () => {
    const sink = new RecordingSink();
    expect(() => new PackedRecordWriter(' s', cipher(), sink).write(['{}'], [2])).toThrow(
      /not canonical/,
    );
    expect(sink.frames).toEqual([]);
  });
});

describe.each([
  ['node', platformCryptoProvider],
  ['noble', nobleCryptoProvider],
])('%s provider: aes256GcmSealInto', (_name, crypto) => {
  const nonce = new Uint8Array(12).fill(3);
  const ad = new Uint8Array(0);

  it('writes exactly what aes256GcmSeal returns, at the offset, and nothing else', () => {
    for (const length of [0, 1, 16, 61_440]) {
      const plaintext = new Uint8Array(randomBytes(length));
      const target = new Uint8Array(length + 16 + 10).fill(0xaa);
      expect(crypto.aes256GcmSealInto(key, nonce, ad, plaintext, target, 7)).toBe(length + 16);
      const sealed = Buffer.from(crypto.aes256GcmSeal(key, nonce, ad, plaintext));
      expect(Buffer.from(target.subarray(7, 7 + length + 16)).equals(sealed)).toBe(true);
      expect([...target.subarray(0, 7), ...target.subarray(7 + length + 16)]).toEqual(
        new Array(10).fill(0xaa),
      );
    }
  });

  it('refuses a target that is too small', () => {
    expect(() =>
      crypto.aes256GcmSealInto(key, nonce, ad, new Uint8Array(10), new Uint8Array(30), 5),
    ).toThrow(RangeError);
  });

  it('TransportCipher.encryptInto matches encrypt and advances the nonce', () => {
    const a = cipher(crypto);
    const b = cipher(crypto);
    for (let record = 0; record < 3; record++) {
      const plaintext = new Uint8Array(randomBytes(100 + record));
      const target = new Uint8Array(200);
      const written = a.encryptInto(plaintext, target, 4);
      expect(Buffer.from(target.subarray(4, 4 + written))).toEqual(
        Buffer.from(b.encrypt(plaintext)),
      );
    }
    expect(a.counter).toBe(3);
    expect(() => a.encryptInto(new Uint8Array(65_535 - 15), new Uint8Array(70_000), 0)).toThrow(
      'transport plaintext is too large',
    );
  });
});

describe('aesGcmNonce', () => {
  it('is 4 zero bytes and the counter as a big-endian u64', () => {
    for (const counter of [
      0,
      1,
      0xff,
      0x1_0000,
      0xffff_ffff,
      0x1_0000_0000,
      2 ** 40 + 5,
      MAX_NONCE,
    ]) {
      const expected = Buffer.alloc(12);
      expected.writeBigUInt64BE(BigInt(counter), 4);
      expect(Buffer.from(aesGcmNonce(counter)).equals(expected)).toBe(true);
    }
  });
});
