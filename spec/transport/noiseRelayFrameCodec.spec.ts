import { describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import {
  dataFrame,
  decodeRelayFrame,
  encodeRelayFrame,
  handshakeFrame,
  RelayProtocolError,
  resetFrame,
  resumeFrame,
  type RelayFrame,
} from '../../src/relay/index.js';
import {
  decodeNoiseRelayFrame,
  encodeNoiseRelayFrame,
} from '../../src/transport/noiseRelayFrameCodec.js';

const STREAM = '0b8f4f2e-8d53-4f0e-9a51-6d0f3c1f2a77';

function bytes(length: number, seed = 1): Uint8Array {
  return Uint8Array.from({ length }, (_, i) => (i * 131 + seed) & 0xff);
}

/** Field-wise equality; payloads compared as bytes (Jest's deep equality is slow on big arrays). */
function expectSameFrame(actual: RelayFrame, expected: RelayFrame): void {
  const payloadOf = (frame: RelayFrame) =>
    'payload' in frame ? Buffer.from(frame.payload) : undefined;
  expect({ ...actual, payload: undefined }).toEqual({ ...expected, payload: undefined });
  const a = payloadOf(actual);
  const b = payloadOf(expected);
  expect(a === undefined ? b === undefined : b !== undefined && a.equals(b)).toBe(true);
}

const frames: RelayFrame[] = [
  dataFrame(STREAM, 0, bytes(1)),
  dataFrame(STREAM, 1, bytes(17)),
  dataFrame(STREAM, 127, bytes(127)),
  dataFrame(STREAM, 128, bytes(128)),
  dataFrame(STREAM, 16_384, bytes(16_384)),
  dataFrame(STREAM, 0xffff_fffe, bytes(61_456)),
  dataFrame('s', 5, bytes(200_000)),
  dataFrame('ünïcödé-stream', 2, bytes(3)),
  dataFrame(STREAM, 3, bytes(9), { traceparent: '00-abc-def-01' }),
  dataFrame(STREAM, 4, bytes(9), { traceparent: '00-abc-def-01', tracestate: 'a=1,b=2' }),
  dataFrame(STREAM, 4, bytes(9), { tracestate: 'only-state' }),
];

describe('noise relay frame fast codec', () => {
  it.each(frames.map((frame) => [frame.kind, frame.streamId.length, frame] as const))(
    'encodes data frames byte-identically to the generic codec (%s, id %i)',
    (_kind, _length, frame) => {
      const fast = encodeNoiseRelayFrame(frame);
      expect(Buffer.from(fast).equals(Buffer.from(encodeRelayFrame(frame)))).toBe(true);
      expectSameFrame(decodeNoiseRelayFrame(fast), decodeRelayFrame(fast));
    },
  );

  it('decodes the vector data frames like the generic codec', () => {
    const vector = JSON.parse(
      readFileSync(
        new URL('../fixtures/noise/noise-hybrid-ik-codex.json', import.meta.url),
        'utf8',
      ),
    ) as { relay_frames_protobuf_hex: Record<string, string> };
    const hexes = Object.values(vector.relay_frames_protobuf_hex);
    expect(hexes.length).toBeGreaterThanOrEqual(6);
    for (const hex of hexes) {
      const frame = Buffer.from(hex, 'hex');
      expect(decodeNoiseRelayFrame(frame)).toEqual(decodeRelayFrame(frame));
    }
  });

  it('delegates other frame kinds to the generic codec', () => {
    for (const frame of [
      resumeFrame(STREAM),
      resetFrame(STREAM),
      handshakeFrame(STREAM, bytes(3424)),
      { kind: 'heartbeat', streamId: STREAM } as const,
      { kind: 'ack', streamId: STREAM } as const,
    ]) {
      const encoded = encodeNoiseRelayFrame(frame);
      expect(Buffer.from(encoded).equals(Buffer.from(encodeRelayFrame(frame)))).toBe(true);
      expect(decodeNoiseRelayFrame(encoded)).toEqual(frame);
    }
  });

  it('accepts fields in any order, unset ack fields and a zero seq written explicitly', () => {
    const payload = bytes(5);
    const reordered = Uint8Array.from([
      0x2a,
      2 + 2 + 2 + 7,
      0x22,
      5,
      ...payload,
      0x18,
      1,
      0x08,
      0x00,
      0x10,
      0x00,
      0x12,
      1,
      0x61,
      0x18,
      0x05,
      0x20,
      0x06,
      0x08,
      0x01,
    ]);
    expect(decodeNoiseRelayFrame(reordered)).toEqual({
      kind: 'data',
      streamId: 'a',
      seq: 0,
      payload,
    });
    expect(decodeNoiseRelayFrame(reordered)).toEqual(decodeRelayFrame(reordered));
  });

  it.each([
    ['version 2', [0x08, 0x02, 0x12, 0x01, 0x61, 0x2a, 0x04, 0x18, 0x01, 0x22, 0x00]],
    ['a blank stream id', [0x08, 0x01, 0x12, 0x01, 0x20, 0x2a, 0x05, 0x18, 0x01, 0x22, 0x01, 0x01]],
    ['an empty payload', [0x08, 0x01, 0x12, 0x01, 0x61, 0x2a, 0x04, 0x18, 0x01, 0x22, 0x00]],
    [
      'segment 1 of 2',
      [0x08, 0x01, 0x12, 0x01, 0x61, 0x2a, 0x07, 0x10, 0x01, 0x18, 0x02, 0x22, 0x01, 0x01],
    ],
    [
      'a truncated payload',
      [0x08, 0x01, 0x12, 0x01, 0x61, 0x2a, 0x05, 0x18, 0x01, 0x22, 0x09, 0x01],
    ],
    ['an overlong varint', [0x08, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01]],
    ['garbage', [0xff, 0xff, 0xff]],
  ])('rejects %s with the relay layer error', (_what, input) => {
    const frame = Uint8Array.from(input);
    expect(() => decodeNoiseRelayFrame(frame)).toThrow(RelayProtocolError);
    let generic: unknown;
    try {
      decodeRelayFrame(frame);
    } catch (error) {
      generic = error;
    }
    expect(() => decodeNoiseRelayFrame(frame)).toThrow((generic as Error).message);
  });

  it('refuses to encode invalid data frames or frames over 256 KiB, like the generic codec', () => {
    expect(() => encodeNoiseRelayFrame(dataFrame(' ', 0, bytes(1)))).toThrow(RelayProtocolError);
    expect(() => encodeNoiseRelayFrame(dataFrame(STREAM, 0, new Uint8Array(0)))).toThrow(
      RelayProtocolError,
    );
    expect(() => encodeNoiseRelayFrame(dataFrame(STREAM, -1, bytes(1)))).toThrow(
      RelayProtocolError,
    );
    expect(() => encodeNoiseRelayFrame(dataFrame(STREAM, 0, bytes(256 * 1024)))).toThrow(
      RelayProtocolError,
    );
  });

  it('returns the payload as a view of the input (no copy)', () => {
    const encoded = encodeNoiseRelayFrame(dataFrame(STREAM, 9, bytes(1000)));
    const frame = decodeNoiseRelayFrame(encoded);
    if (frame.kind !== 'data') throw new Error('expected data');
    expect(frame.payload.buffer).toBe(encoded.buffer);
  });
});
