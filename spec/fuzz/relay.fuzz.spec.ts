/**
 * Fuzzing the relay layer's decoders: protobuf frames (the generic codec and the data-frame
 * fast path, which must agree on every input), record reassembly and reordering. Each input
 * gives a valid value or a `RelayProtocolError`, never another throw.
 */
import { describe, expect, it, jest } from '@jest/globals';
import { create, fromBinary, toBinary } from '@bufbuild/protobuf';
import fc from 'fast-check';
import {
  DEFAULT_REORDER_LIMITS,
  dataFrameEnvelope,
  decodeRelayFrame,
  encodeRelayFrame,
  frameMessage,
  LENGTH_PREFIX_BYTES,
  MessageReassembler,
  NOISE_RECORD_PLAINTEXT_LEN,
  OrderedCiphertextReceiver,
  RelayProtocolError,
  type RelayFrame,
} from '../../src/relay/index.js';
import { bytes, cutAt, fuzzParameters, fuzzTimeoutMs, mutated } from './fuzzRuns.js';
import { RelayMessageFrameSchema } from '../relay/protobuf/gen/relay_pb.js';
import { validateRelayFrame } from '../../src/relay/frames.js';

jest.setTimeout(fuzzTimeoutMs());

/** The outcome of a decoder: the frame (payloads as plain arrays) or the error's class and text. */
function outcome(decode: () => RelayFrame): unknown {
  try {
    const frame = decode();
    return 'payload' in frame ? { ...frame, payload: Array.from(frame.payload) } : { ...frame };
  } catch (error) {
    expect(error).toBeInstanceOf(RelayProtocolError);
    return { error: (error as Error).message };
  }
}

const streamId = fc.oneof(
  fc.constantFrom('s1', 'stream-0001', ' x '),
  fc.string({ minLength: 1, maxLength: 24 }),
);
const trace = fc.record(
  { traceparent: fc.string({ maxLength: 60 }), tracestate: fc.string({ maxLength: 30 }) },
  { requiredKeys: [] },
);
const frame: fc.Arbitrary<RelayFrame> = fc.oneof(
  fc
    .tuple(
      streamId,
      fc.nat({ max: 0xffff_fffe }),
      fc.uint8Array({ minLength: 1, maxLength: 300 }),
      trace,
    )
    .map(([id, seq, payload, t]) => ({ kind: 'data' as const, streamId: id, seq, payload, ...t })),
  fc
    .tuple(streamId, fc.uint8Array({ minLength: 1, maxLength: 300 }))
    .map(([id, payload]) => ({ kind: 'handshake' as const, streamId: id, payload })),
  fc
    .tuple(streamId, fc.nat({ max: 0xffff_ffff }))
    .map(([id, nextSeq]) => ({ kind: 'resume' as const, streamId: id, nextSeq })),
  fc
    .tuple(streamId, fc.string({ minLength: 1, maxLength: 40 }))
    .map(([id, reason]) => ({ kind: 'reset' as const, streamId: id, reason })),
  streamId.map((id) => ({ kind: 'ack' as const, streamId: id })),
  streamId.map((id) => ({ kind: 'heartbeat' as const, streamId: id })),
);

/** The generated reference codec's reading of `input` (protoc-gen-es), validated as frames.ts does. */
function referenceOutcome(input: Uint8Array): unknown {
  let message;
  try {
    message = fromBinary(RelayMessageFrameSchema, input);
  } catch {
    return 'malformed';
  }
  const header = {
    streamId: message.streamId,
    ...(message.traceparent === undefined ? {} : { traceparent: message.traceparent }),
    ...(message.tracestate === undefined ? {} : { tracestate: message.tracestate }),
  };
  const body = message.body;
  const candidate = (): RelayFrame => {
    if (message.version !== 1)
      throw new RelayProtocolError(`unsupported relay message frame version ${message.version}`);
    if (message.streamId.trim() === '')
      throw new RelayProtocolError('relay message frame is missing stream_id');
    switch (body.case) {
      case 'data':
        if (body.value.segmentIndex !== 0 || body.value.segmentCount !== 1)
          throw new RelayProtocolError('relay data message frame is missing required fields');
        return { ...header, kind: 'data', seq: body.value.seq, payload: body.value.payload };
      case 'handshake':
        return { ...header, kind: 'handshake', payload: body.value.payload };
      case 'resume':
        return { ...header, kind: 'resume', nextSeq: body.value.nextSeq };
      case 'reset':
        return { ...header, kind: 'reset', reason: body.value.reason };
      case 'ackFrame':
        return { ...header, kind: 'ack' };
      case 'heartbeat':
        return { ...header, kind: 'heartbeat' };
      default:
        throw new RelayProtocolError('relay message frame is missing body');
    }
  };
  // Validation (payloads, reasons, ids) is frames.ts's own; only the parse is compared here.
  return outcome(() => {
    const frame = candidate();
    validateRelayFrame(frame);
    return frame;
  });
}

/** What frames.ts makes of `input`, with every malformed-protobuf error as one outcome. */
function ourOutcome(input: Uint8Array): unknown {
  const result = outcome(() => decodeRelayFrame(input));
  const error = (result as { error?: string }).error;
  return error?.startsWith('exec-server protocol error: invalid relay message frame:')
    ? 'malformed'
    : result;
}

/** A valid frame's bytes, damaged. */
const damagedFrame = frame
  .filter((f) => f.streamId.trim() !== '')
  .chain((f) => mutated(encodeRelayFrame(f)));

describe('fuzz: relay protobuf frames', () => {
  it('parses every input it accepts as the generated reference codec does (spec/relay/protobuf/gen)', () => {
    fc.assert(
      fc.property(fc.oneof(bytes(400), damagedFrame), (input) => {
        // Whatever we parse (a frame, or a frame rule's error), the reference codec parses the
        // same way. Where we find the protobuf malformed and it does not, we are the stricter:
        // prost (codex's codec) rejects a known field under another wire type, and bounds every
        // field by its enclosing message, where protoc-gen-es reads on (found by this property).
        const ours = ourOutcome(input);
        if (ours === 'malformed') return;
        expect(ours).toEqual(referenceOutcome(input));
      }),
      fuzzParameters(),
    );
  });

  it('writes every valid frame as the generated reference codec does', () => {
    fc.assert(
      fc.property(
        frame.filter((f) => f.streamId.trim() !== ''),
        (original) => {
          const { kind, streamId: id, traceparent, tracestate } = original;
          const value =
            original.kind === 'data'
              ? { seq: original.seq, segmentCount: 1, payload: original.payload }
              : original.kind === 'handshake'
                ? { payload: original.payload }
                : original.kind === 'resume'
                  ? { nextSeq: original.nextSeq }
                  : original.kind === 'reset'
                    ? { reason: original.reason }
                    : {};
          const reference = toBinary(
            RelayMessageFrameSchema,
            create(RelayMessageFrameSchema, {
              version: 1,
              streamId: id,
              body: { case: kind === 'ack' ? 'ackFrame' : kind, value } as never,
              ...(traceparent === undefined ? {} : { traceparent }),
              ...(tracestate === undefined ? {} : { tracestate }),
            }),
          );
          expect(Array.from(encodeRelayFrame(original))).toEqual(Array.from(reference));
        },
      ),
      fuzzParameters(),
    );
  });

  it('round-trips every valid frame, byte for byte, data frames also through their envelope', () => {
    fc.assert(
      fc.property(frame, (original) => {
        if (original.streamId.trim() === '') {
          expect(() => encodeRelayFrame(original)).toThrow(RelayProtocolError);
          return;
        }
        const encoded = encodeRelayFrame(original);
        if (original.kind === 'data') {
          const { head, tail } = dataFrameEnvelope(
            original.streamId,
            original.seq,
            original.payload.length,
            original,
          );
          expect(Array.from(Buffer.concat([head, original.payload, tail]))).toEqual(
            Array.from(encoded),
          );
        }
        expect(outcome(() => decodeRelayFrame(encoded))).toEqual(outcome(() => original));
      }),
      fuzzParameters(),
    );
  });
});

const fractions = fc.array(fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }), {
  maxLength: 10,
});

describe('fuzz: record reassembly', () => {
  it('gives back every message exactly once and in order, however the stream is cut into records', () => {
    fc.assert(
      fc.property(
        fc.array(fc.uint8Array({ minLength: 1, maxLength: 2000 }), { maxLength: 8 }),
        fractions,
        fc.integer({ min: 1, max: NOISE_RECORD_PLAINTEXT_LEN }),
        (messages, cuts, recordLimit) => {
          const stream = Buffer.concat(messages.map((m) => frameMessage(m)));
          const records = cutAt(stream, cuts).flatMap((piece) => {
            const out: Uint8Array[] = [];
            for (let at = 0; at < piece.length; at += recordLimit)
              out.push(piece.subarray(at, at + recordLimit));
            return out;
          });
          const reassembler = new MessageReassembler();
          const received = records.flatMap((record) =>
            reassembler.push(record).map((m) => Array.from(m)),
          );
          expect(received).toEqual(messages.map((m) => Array.from(m)));
          expect(reassembler.bufferedBytes).toBe(0);
        },
      ),
      fuzzParameters(),
    );
  });

  it('takes arbitrary records as messages or a RelayProtocolError, and stays failed after one', () => {
    const record = fc.oneof(
      bytes(300),
      // Length prefixes near the limits.
      fc.constantFrom(0, 1, 2 ** 26, 2 ** 26 + 1, 2 ** 32 - 1).map((n) => {
        const prefix = new Uint8Array(LENGTH_PREFIX_BYTES);
        new DataView(prefix.buffer).setUint32(0, n);
        return prefix;
      }),
      fc
        .integer({ min: NOISE_RECORD_PLAINTEXT_LEN + 1, max: NOISE_RECORD_PLAINTEXT_LEN + 8 })
        .map((n) => new Uint8Array(n)),
    );
    fc.assert(
      fc.property(fc.array(record, { maxLength: 8 }), (records) => {
        const reassembler = new MessageReassembler();
        let pushed = 0;
        let failed: unknown;
        for (const item of records) {
          try {
            const messages = reassembler.push(item);
            pushed += item.length;
            const delivered = messages.reduce((sum, m) => sum + m.length + LENGTH_PREFIX_BYTES, 0);
            expect(delivered).toBeLessThanOrEqual(pushed);
            // Held bytes never exceed what arrived.
            expect(reassembler.bufferedBytes).toBeLessThanOrEqual(pushed);
          } catch (error) {
            expect(error).toBeInstanceOf(RelayProtocolError);
            if (failed !== undefined) expect(error).toBe(failed);
            failed = error;
          }
        }
      }),
      fuzzParameters(),
    );
  });
});

describe('fuzz: ordered ciphertext receiver', () => {
  it('releases each seq exactly once and in order from any arrival order inside the window, duplicates included', () => {
    fc.assert(
      fc.property(
        fc
          .integer({ min: 1, max: 60 })
          .chain((count) =>
            fc.tuple(
              fc.constant(count),
              fc.shuffledSubarray([...Array(count).keys()], { minLength: count, maxLength: count }),
              fc.array(fc.nat(count - 1), { maxLength: 10 }),
            ),
          ),
        ([count, order, duplicates]) => {
          const receiver = new OrderedCiphertextReceiver();
          const released: number[] = [];
          const arrivals = [...order];
          for (const seq of duplicates) arrivals.splice(seq % (arrivals.length + 1), 0, seq);
          for (const seq of arrivals) {
            for (const record of receiver.push(seq, Uint8Array.of(seq))) released.push(record[0]!);
            expect(receiver.pendingRecords).toBeLessThanOrEqual(
              DEFAULT_REORDER_LIMITS.maxPendingRecords,
            );
          }
          expect(released).toEqual([...Array(count).keys()]);
          expect(receiver.nextSeq).toBe(count);
        },
      ),
      fuzzParameters(),
    );
  });

  it('answers any seq with records, nothing or a RelayProtocolError, within its limits', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.oneof(fc.nat(200), fc.double(), fc.integer()), fc.nat(40_000)), {
          maxLength: 100,
        }),
        (arrivals) => {
          const receiver = new OrderedCiphertextReceiver();
          let last = -1;
          for (const [seq, size] of arrivals) {
            try {
              for (const record of receiver.push(seq, new Uint8Array(size))) {
                expect(record.length).toBeGreaterThanOrEqual(0);
              }
            } catch (error) {
              expect(error).toBeInstanceOf(RelayProtocolError);
              continue;
            }
            expect(receiver.nextSeq).toBeGreaterThanOrEqual(last);
            last = receiver.nextSeq;
            expect(receiver.pendingBytes).toBeLessThanOrEqual(
              DEFAULT_REORDER_LIMITS.maxPendingBytes,
            );
            expect(receiver.pendingRecords).toBeLessThanOrEqual(
              DEFAULT_REORDER_LIMITS.maxPendingRecords,
            );
          }
        },
      ),
      fuzzParameters(),
    );
  });
});

describe('fuzz: reassembly memory', () => {
  it('holds memory in proportion to the bytes received, not to the length a prefix claims', () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 2 ** 20, max: 2 ** 26 }), { minLength: 4, maxLength: 4 }),
        fc.nat(1000),
        (claims, sent) => {
          const before = process.memoryUsage().arrayBuffers;
          const held = claims.map((claim) => {
            const reassembler = new MessageReassembler();
            const record = new Uint8Array(LENGTH_PREFIX_BYTES + sent);
            new DataView(record.buffer).setUint32(0, claim);
            expect(reassembler.push(record)).toEqual([]);
            return reassembler;
          });
          const grown = process.memoryUsage().arrayBuffers - before;
          // Four peers that each sent about 1 KB claiming up to 64 MiB: far below one claim.
          expect(grown).toBeLessThan(4 * 1024 * 1024);
          expect(held.every((r) => r.bufferedBytes === LENGTH_PREFIX_BYTES + sent)).toBe(true);
        },
      ),
      fuzzParameters(20),
    );
  });
});
