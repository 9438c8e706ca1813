import { describe, expect, it } from '@jest/globals';
import { create, toBinary } from '@bufbuild/protobuf';
import {
  MAX_RELAY_WEBSOCKET_MESSAGE_SIZE,
  type RelayFrame,
  dataFrame,
  dataFrameEnvelope,
  decodeRelayFrame,
  encodeRelayFrame,
  handshakeFrame,
  resetFrame,
  resumeFrame,
} from '../../src/relay/frames.js';
import { RelayDataSchema, RelayMessageFrameSchema } from './protobuf/gen/relay_pb.js';
import { RelayProtocolError } from '../../src/relay/relayProtocolError.js';
import { ProtocolError } from '../../src/protocol/errors.js';
import { hex, toHex, vector } from './vector.js';

const streamId = vector.stream_id;
const frames = vector.relay_frames_protobuf_hex;
const [harnessRecord, executorRecord] = vector.transport;
// The vector's harness data frame carries clear-text trace context (fields 11 and 12) even
// though its encrypted JSON has no `trace` member.
const vectorTrace = {
  traceparent: '00-00000000000000000000000000000001-0000000000000002-01',
  tracestate: 'dd=s:1',
};

function rejection(run: () => unknown): RelayProtocolError {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(RelayProtocolError);
    expect(error).toBeInstanceOf(ProtocolError);
    return error as RelayProtocolError;
  }
  throw new Error('expected a RelayProtocolError');
}

/** Raw protobuf bytes of a frame this codec would refuse to encode. */
function rawFrame(init: Parameters<typeof create<typeof RelayMessageFrameSchema>>[1]): Uint8Array {
  return toBinary(RelayMessageFrameSchema, create(RelayMessageFrameSchema, init));
}

describe('encodeRelayFrame reproduces the codex vector byte for byte', () => {
  it('resume (next_seq 0 still emits the empty body)', () => {
    const bytes = encodeRelayFrame(resumeFrame(streamId));
    expect(toHex(bytes)).toBe(frames.harness_resume);
    expect(bytes.length).toBe(42);
    expect(toHex(bytes.subarray(-2))).toBe('3a00');
  });

  it('both handshake frames', () => {
    expect(toHex(encodeRelayFrame(handshakeFrame(streamId, hex(vector.msg1_hex))))).toBe(
      frames.harness_handshake,
    );
    expect(toHex(encodeRelayFrame(handshakeFrame(streamId, hex(vector.msg2_hex))))).toBe(
      frames.executor_handshake,
    );
  });

  it('data frames with seq 0: seq and segment_index omitted, segment_count = 1 present', () => {
    const harness = encodeRelayFrame(
      dataFrame(streamId, 0, hex(harnessRecord!.ciphertext_hex), vectorTrace),
    );
    expect(toHex(harness)).toBe(frames.harness_data_seq0);
    expect(toHex(harness.subarray(40, 44))).toBe('2a621801');
    const executor = encodeRelayFrame(dataFrame(streamId, 0, hex(executorRecord!.ciphertext_hex)));
    expect(toHex(executor)).toBe(frames.executor_data_seq0);
  });

  it('trace fields are emitted only when set, after the body', () => {
    const bare = encodeRelayFrame(dataFrame(streamId, 0, hex(harnessRecord!.ciphertext_hex)));
    expect(toHex(bare)).toBe(frames.harness_data_seq0.slice(0, bare.length * 2));
    expect(hex(frames.harness_data_seq0).length).toBeGreaterThan(bare.length);
    const onlyState = encodeRelayFrame(dataFrame('s', 0, new Uint8Array([1]), { tracestate: 'x' }));
    expect(toHex(onlyState)).toBe('08011201732a0518012201016201' + '78');
  });

  it('the executor reset with its fixed reason', () => {
    expect(toHex(encodeRelayFrame(resetFrame(streamId)))).toBe(frames.executor_reset);
  });
});

describe('decodeRelayFrame', () => {
  it('decodes every vector frame into the typed union and round-trips it', () => {
    const expected: Record<keyof typeof frames, RelayFrame> = {
      harness_resume: resumeFrame(streamId),
      harness_handshake: handshakeFrame(streamId, hex(vector.msg1_hex)),
      executor_handshake: handshakeFrame(streamId, hex(vector.msg2_hex)),
      harness_data_seq0: dataFrame(streamId, 0, hex(harnessRecord!.ciphertext_hex), vectorTrace),
      executor_data_seq0: dataFrame(streamId, 0, hex(executorRecord!.ciphertext_hex)),
      executor_reset: resetFrame(streamId, 'noise_relay_protocol_error'),
    };
    for (const [name, bytes] of Object.entries(frames)) {
      const decoded = decodeRelayFrame(hex(bytes));
      expect(decoded).toEqual(expected[name as keyof typeof frames]);
      expect(toHex(encodeRelayFrame(decoded))).toBe(bytes);
    }
  });

  it('accepts fields in any order and keeps seq and trace context', () => {
    const frame = dataFrame(streamId, 7, new Uint8Array([1, 2, 3]), {
      traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01',
    });
    const bytes = encodeRelayFrame(frame);
    expect(decodeRelayFrame(bytes)).toEqual(frame);
    // Reverse the top-level fields: stream_id (tag 0x12) after the body and the version.
    const idField = bytes.subarray(0 + 2, 2 + 2 + streamId.length);
    const reordered = new Uint8Array([
      ...bytes.subarray(2 + idField.length),
      ...bytes.subarray(0, 2),
      ...idField,
    ]);
    expect(decodeRelayFrame(reordered)).toEqual(frame);
  });

  it('ignores the unused ack header fields', () => {
    const bytes = rawFrame({
      version: 1,
      streamId: 's',
      ack: 5,
      ackBits: 3,
      body: { case: 'heartbeat', value: {} },
    });
    expect(decodeRelayFrame(bytes)).toEqual({ kind: 'heartbeat', streamId: 's' });
  });

  it('rejects malformed protobuf bytes', () => {
    const truncated = hex(frames.harness_data_seq0).subarray(0, 60);
    expect(rejection(() => decodeRelayFrame(truncated)).detail).toMatch(
      /^invalid relay message frame: /,
    );
    expect(rejection(() => decodeRelayFrame(new Uint8Array([0xff]))).detail).toMatch(
      /^invalid relay message frame: /,
    );
    // A varint that never ends.
    expect(() => decodeRelayFrame(new Uint8Array([0x08, 0xff, 0xff, 0xff]))).toThrow(
      RelayProtocolError,
    );
  });

  it('rejects strings that are not UTF-8, as prost does', () => {
    const badStreamId = new Uint8Array([0x08, 0x01, 0x12, 0x02, 0xff, 0xfe, 0x3a, 0x00]);
    expect(rejection(() => decodeRelayFrame(badStreamId)).detail).toMatch(
      /^invalid relay message frame: .*utf-8/,
    );
  });

  it('rejects an unknown frame kind as a missing body', () => {
    // Field 13 (wire type 2) is not part of the schema; proto3 keeps it as an unknown field.
    const known = hex(frames.harness_resume).subarray(0, 40);
    const unknownKind = new Uint8Array([...known, 0x6a, 0x00]);
    expect(rejection(() => decodeRelayFrame(unknownKind)).detail).toBe(
      'relay message frame is missing body',
    );
  });

  it.each([
    [
      { version: 2, streamId: 's', body: { case: 'resume', value: {} } },
      'unsupported relay message frame version 2',
    ],
    [
      { version: 0, streamId: 's', body: { case: 'resume', value: {} } },
      'unsupported relay message frame version 0',
    ],
    [
      { version: 1, streamId: '  ', body: { case: 'resume', value: {} } },
      'relay message frame is missing stream_id',
    ],
    [{ version: 1, streamId: 's' }, 'relay message frame is missing body'],
    [
      { version: 2, streamId: '', body: { case: 'data', value: {} } },
      'unsupported relay message frame version 2',
    ],
    [
      { version: 1, streamId: '', body: { case: 'data', value: {} } },
      'relay message frame is missing stream_id',
    ],
    [
      { version: 1, streamId: 's', body: { case: 'reset', value: {} } },
      'relay reset message frame is missing reason',
    ],
    [
      { version: 1, streamId: 's', body: { case: 'handshake', value: {} } },
      'relay handshake message frame is missing payload',
    ],
    [
      { version: 1, streamId: 's', body: { case: 'data', value: { segmentCount: 1 } } },
      'relay data message frame is missing required fields',
    ],
    [
      {
        version: 1,
        streamId: 's',
        body: { case: 'data', value: { payload: new Uint8Array([1]) } },
      },
      'relay data message frame is missing required fields',
    ],
    [
      {
        version: 1,
        streamId: 's',
        body: {
          case: 'data',
          value: create(RelayDataSchema, {
            segmentIndex: 1,
            segmentCount: 2,
            payload: new Uint8Array([1]),
          }),
        },
      },
      'relay data message frame is missing required fields',
    ],
  ] as const)('rejects invalid frame %#: %s', (init, detail) => {
    const bytes = rawFrame(init as Parameters<typeof rawFrame>[0]);
    const error = rejection(() => decodeRelayFrame(bytes));
    expect(error.detail).toBe(detail);
    expect(error.message).toBe(`exec-server protocol error: ${detail}`);
  });

  it('enforces the 256 KiB WebSocket message limit before parsing', () => {
    const oversize = new Uint8Array(MAX_RELAY_WEBSOCKET_MESSAGE_SIZE + 1);
    expect(rejection(() => decodeRelayFrame(oversize)).detail).toBe(
      'relay message frame of 262145 bytes exceeds the 262144-byte WebSocket message limit',
    );
  });
});

describe('encode-side validation', () => {
  it('refuses frames codex would reject', () => {
    expect(rejection(() => encodeRelayFrame(dataFrame('s', 0, new Uint8Array()))).detail).toBe(
      'relay data message frame is missing required fields',
    );
    expect(rejection(() => encodeRelayFrame(resetFrame('s', ''))).detail).toBe(
      'relay reset message frame is missing reason',
    );
    expect(rejection(() => encodeRelayFrame(resumeFrame(' '))).detail).toBe(
      'relay message frame is missing stream_id',
    );
    expect(() => encodeRelayFrame(dataFrame('s', -1, new Uint8Array([1])))).toThrow(
      RelayProtocolError,
    );
    expect(() => encodeRelayFrame(dataFrame('s', 2 ** 32, new Uint8Array([1])))).toThrow(
      RelayProtocolError,
    );
  });

  it('allows a frame of exactly 256 KiB and refuses one byte more', () => {
    // Overhead: version (2) + stream id (2 + 1) + data tag and 3-byte length (4) +
    // segment_count (2) + payload tag and 3-byte length (4) = 15 bytes.
    const fits = encodeRelayFrame(
      dataFrame('s', 0, new Uint8Array(MAX_RELAY_WEBSOCKET_MESSAGE_SIZE - 15)),
    );
    expect(fits.length).toBe(MAX_RELAY_WEBSOCKET_MESSAGE_SIZE);
    expect(decodeRelayFrame(fits).kind).toBe('data');
    expect(() =>
      encodeRelayFrame(dataFrame('s', 0, new Uint8Array(MAX_RELAY_WEBSOCKET_MESSAGE_SIZE - 14))),
    ).toThrow(/exceeds the 262144-byte WebSocket message limit/);
  });
});

describe('dataFrameEnvelope', () => {
  const bytes = (length: number): Uint8Array =>
    Uint8Array.from({ length }, (_, i) => (i * 131 + 1) & 0xff);
  const id = '0b8f4f2e-8d53-4f0e-9a51-6d0f3c1f2a77';
  const cases = [
    dataFrame(id, 0, bytes(1)),
    dataFrame(id, 127, bytes(127)),
    dataFrame(id, 128, bytes(128)),
    dataFrame(id, 16_384, bytes(16_384)),
    dataFrame(id, 0xffff_ffff, bytes(61_456)),
    dataFrame('s', 5, bytes(200_000)),
    dataFrame('ünïcödé-stream', 2, bytes(3)),
    dataFrame(id, 3, bytes(9), { traceparent: vectorTrace.traceparent }),
    dataFrame(id, 4, bytes(9), vectorTrace),
    dataFrame(id, 4, bytes(9), { tracestate: 'only-state' }),
  ];

  it.each(cases.map((frame) => [frame.seq, frame.payload.length, frame] as const))(
    'puts around the payload what the reference codec does (seq %i, %i bytes)',
    (_seq, _length, frame) => {
      const { head, tail, length } = dataFrameEnvelope(
        frame.streamId,
        frame.seq,
        frame.payload.length,
        frame,
      );
      const whole = Buffer.concat([head, frame.payload, tail]);
      expect(whole.length).toBe(length);
      const reference = rawFrame({
        version: 1,
        streamId: frame.streamId,
        body: {
          case: 'data',
          value: create(RelayDataSchema, {
            seq: frame.seq,
            segmentCount: 1,
            payload: frame.payload,
          }),
        },
        ...(frame.traceparent === undefined ? {} : { traceparent: frame.traceparent }),
        ...(frame.tracestate === undefined ? {} : { tracestate: frame.tracestate }),
      });
      expect(whole.equals(reference)).toBe(true);
      expect(whole.equals(encodeRelayFrame(frame))).toBe(true);
    },
  );

  it('refuses what encodeRelayFrame refuses, with its texts', () => {
    const refusals: [string, number, number][] = [
      [' ', 0, 1],
      [id, 0, 0],
      [id, -1, 1],
      [id, 2 ** 32, 1],
      [id, 0, MAX_RELAY_WEBSOCKET_MESSAGE_SIZE],
    ];
    for (const [stream, seq, payloadLength] of refusals) {
      const expected = rejection(() =>
        encodeRelayFrame(dataFrame(stream, seq, new Uint8Array(payloadLength))),
      );
      expect(rejection(() => dataFrameEnvelope(stream, seq, payloadLength)).detail).toBe(
        expected.detail,
      );
    }
  });

  it('decodes a data frame with its payload as a view of the input (no copy)', () => {
    const encoded = encodeRelayFrame(dataFrame(id, 9, bytes(1000)));
    const frame = decodeRelayFrame(encoded);
    if (frame.kind !== 'data') throw new Error('expected data');
    expect(frame.payload.buffer).toBe(encoded.buffer);
  });
});
