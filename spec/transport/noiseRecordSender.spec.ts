import { describe, expect, it } from '@jest/globals';
import { MessageReassembler, RelayDataSender, RelayProtocolError } from '../../src/relay/index.js';
import { NoiseRecordSender } from '../../src/transport/noiseRecordSender.js';
import { decodeUtf8Strict } from '../../src/transport/noiseUtf8.js';

/** A "cipher" that copies, so the records themselves can be compared. */
const copying = { encrypt: (plain: Uint8Array) => Uint8Array.from(plain) };

describe('NoiseRecordSender', () => {
  it.each([1, 61_435, 61_436, 61_437, 122_876, 200_000])(
    'produces the relay layer records, seqs and frames for a %i-character message',
    (length) => {
      const message = `{"x":"${'é'.repeat(Math.floor(length / 3))}${'a'.repeat(length % 3)}"}`;
      const ours = new NoiseRecordSender('s', copying);
      const reference = new RelayDataSender('s', copying);
      for (let round = 0; round < 2; round++) {
        const a = ours.send(message);
        const b = reference.send(message);
        expect(a.map((f) => [f.seq, f.payload.length])).toEqual(
          b.map((f) => [f.seq, f.payload.length]),
        );
        a.forEach((frame, i) => {
          expect(Buffer.from(frame.payload).equals(Buffer.from(b[i]!.payload))).toBe(true);
        });
      }
    },
  );

  it('puts the trace context on the first frame only', () => {
    const frames = new NoiseRecordSender('s', copying).send('x'.repeat(70_000), {
      traceparent: 'tp',
    });
    expect(frames).toHaveLength(2);
    expect(frames[0]?.traceparent).toBe('tp');
    expect(frames[1]).not.toHaveProperty('traceparent');
  });

  it('packs several messages into shared records that the reassembler splits back', () => {
    const messages = Array.from(
      { length: 9 },
      (_, i) => `{"i":${i},"x":"${'é'.repeat(5_000 * i)}"}`,
    );
    const sender = new NoiseRecordSender('s', copying);
    const frames = sender.sendPacked(messages, { traceparent: 'tp' });
    const packedBytes = messages.reduce((sum, m) => sum + 4 + Buffer.byteLength(m), 0);
    expect(frames).toHaveLength(Math.ceil(packedBytes / 61_440));
    expect(frames.map((f) => f.seq)).toEqual(frames.map((_, i) => i));
    expect(frames[0]?.traceparent).toBe('tp');
    expect(frames.slice(1).some((f) => 'traceparent' in f)).toBe(false);
    for (const frame of frames.slice(0, -1)) expect(frame.payload.length).toBe(61_440);
    const reassembler = new MessageReassembler();
    const out = frames.flatMap((f) => reassembler.push(f.payload));
    expect(out.map((bytes) => Buffer.from(bytes).toString('utf8'))).toEqual(messages);
    // The sequence continues across calls.
    expect(sender.send('{}')[0]?.seq).toBe(frames.length);
  });

  it('refuses a packed batch holding an empty message before encrypting anything', () => {
    let encrypted = 0;
    const counting = { encrypt: (plain: Uint8Array) => (encrypted++, Uint8Array.from(plain)) };
    expect(() => new NoiseRecordSender('s', counting).sendPacked(['{}', ''])).toThrow(
      new RelayProtocolError('Noise relay JSON-RPC message has invalid length'),
    );
    expect(encrypted).toBe(0);
  });

  it('refuses an empty message with the relay layer text', () => {
    expect(() => new NoiseRecordSender('s', copying).send('')).toThrow(
      new RelayProtocolError('Noise relay JSON-RPC message has invalid length'),
    );
  });
});

describe('decodeUtf8Strict', () => {
  it('decodes valid UTF-8 and refuses invalid bytes', () => {
    expect(decodeUtf8Strict(Buffer.from('{"é":"✓"}'))).toBe('{"é":"✓"}');
    expect(decodeUtf8Strict(Uint8Array.from([0x7b, 0xff, 0x7d]))).toBeUndefined();
    expect(decodeUtf8Strict(Uint8Array.from([0xed, 0xa0, 0x80]))).toBeUndefined(); // surrogate
  });
});
