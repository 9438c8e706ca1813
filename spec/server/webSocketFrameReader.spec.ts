/**
 * WebSocketFrameReader on hand-built client frames: what a recording sink sees for whole,
 * batched and arbitrarily split input, every length form, fragmentation with control frames
 * in between, Text decoding, unmasking, and each protocol violation (reported once, after
 * which nothing more is read).
 */
import { describe, expect, it } from '@jest/globals';
import {
  TEXT_BYTES_FROM,
  WebSocketFrameReader,
  type FrameReaderLimits,
  type FrameReaderSink,
} from '../../src/server/webSocketFrameReader.js';
import { clientFrame, Opcode, referenceMask, uint32 } from '../support/clientFrames.js';
import { seededRandom as random } from '../support/seededRandom.js';

const frame = clientFrame;

type ReaderEvent =
  | { kind: 'text'; text: string }
  | { kind: 'binary'; hex: string }
  | { kind: 'ping'; hex: string }
  | { kind: 'peerClosed' }
  | { kind: 'violation'; reason: string };

/** A sink that records what it is told (copies: `data` is only valid during the call). */
class RecordingSink implements FrameReaderSink {
  readonly events: ReaderEvent[] = [];
  text(message: string): void {
    this.events.push({ kind: 'text', text: message });
  }
  binary(data: Buffer): void {
    this.events.push({ kind: 'binary', hex: data.toString('hex') });
  }
  ping(payload: Buffer): void {
    this.events.push({ kind: 'ping', hex: payload.toString('hex') });
  }
  peerClosed(): void {
    this.events.push({ kind: 'peerClosed' });
  }
  violation(reason: string): void {
    this.events.push({ kind: 'violation', reason });
  }
}

/** Feeds `chunks` (copied: the reader unmasks in place) to a new reader; returns its events. */
function read(chunks: readonly Buffer[], limits?: FrameReaderLimits): ReaderEvent[] {
  const sink = new RecordingSink();
  const reader = new WebSocketFrameReader(sink, limits);
  for (const chunk of chunks) reader.push(Buffer.from(chunk));
  return sink.events;
}

const text = (value: string): ReaderEvent => ({ kind: 'text', text: value });

const binary = (bytes: Buffer): ReaderEvent => ({ kind: 'binary', hex: bytes.toString('hex') });

function randomBytes(next: () => number, length: number): Buffer {
  return Buffer.from(Array.from({ length }, () => Math.floor(next() * 256)));
}

describe('WebSocketFrameReader: reading frames', () => {
  it('reads a single Text frame', () => {
    expect(read([frame(Opcode.text, '{"id":1}')])).toEqual([text('{"id":1}')]);
  });

  it('reads several frames that arrive in one chunk, in order', () => {
    const chunk = Buffer.concat([
      frame(Opcode.text, 'one'),
      frame(Opcode.binary, Buffer.from([0, 1, 2, 0xff])),
      frame(Opcode.ping, 'p'),
      frame(Opcode.text, 'two'),
    ]);
    expect(read([chunk])).toEqual([
      text('one'),
      binary(Buffer.from([0, 1, 2, 0xff])),
      { kind: 'ping', hex: Buffer.from('p').toString('hex') },
      text('two'),
    ]);
  });

  it('reads an empty Text message', () => {
    expect(read([frame(Opcode.text, '')])).toEqual([text('')]);
  });

  it('reads the 7-bit, 16-bit and 64-bit length forms, at their edges', () => {
    const payloads = [125, 126, 65_535, 65_536, 70_000].map((length) =>
      Buffer.alloc(length, 'x'.charCodeAt(0) + (length % 7)),
    );
    const events = read(payloads.map((payload) => frame(Opcode.text, payload)));
    expect(events).toEqual(payloads.map((payload) => text(payload.toString())));
    // Non-minimal forms are read too (as tungstenite does).
    expect(
      read([
        frame(Opcode.text, 'short', { lengthForm: 16 }),
        frame(Opcode.text, 'tiny', { lengthForm: 64 }),
      ]),
    ).toEqual([text('short'), text('tiny')]);
  });

  it('reads a 64-bit-length frame that arrives in pieces', () => {
    const payload = randomBytes(random(7), 70_000);
    const bytes = frame(Opcode.binary, payload);
    const cuts = [1, 2, 5, 9, 10, 13, 14, 1_000, 65_550, bytes.length - 1];
    const pieces = cuts.map((cut, index) => bytes.subarray(index === 0 ? 0 : cuts[index - 1], cut));
    pieces.push(bytes.subarray(cuts[cuts.length - 1]));
    expect(read(pieces)).toEqual([binary(payload)]);
  });

  it('joins a fragmented message, answering a Ping that comes between its fragments', () => {
    const events = read([
      frame(Opcode.text, '{"id":', { fin: false }),
      frame(Opcode.ping, 'mid'),
      frame(Opcode.continuation, '1,"x":', { fin: false }),
      frame(Opcode.pong, 'ignored'),
      frame(Opcode.continuation, '2}'),
      frame(Opcode.text, 'after'),
    ]);
    expect(events).toEqual([
      { kind: 'ping', hex: Buffer.from('mid').toString('hex') },
      text('{"id":1,"x":2}'),
      text('after'),
    ]);
  });

  it('joins a message sent one byte a fragment, itself sent one byte a chunk', () => {
    const message = '{"id":7,"method":"fs/getMetadata","params":{"path":"file:///tmp"}}'.repeat(40);
    const frames = [...message].map((char, index) =>
      frame(index === 0 ? Opcode.text : Opcode.continuation, char, {
        fin: index === message.length - 1,
      }),
    );
    const wire = Buffer.concat(frames);
    const bytes = [...wire].map((byte) => Buffer.of(byte));
    expect(read(bytes)).toEqual([text(message)]);
  });

  it('joins a fragmented Binary message', () => {
    const events = read([
      frame(Opcode.binary, Buffer.from([1, 2]), { fin: false }),
      frame(Opcode.continuation, Buffer.from([0x80, 3])),
    ]);
    expect(events).toEqual([binary(Buffer.from([1, 2, 0x80, 3]))]);
  });

  it('ignores a Pong', () => {
    expect(read([frame(Opcode.pong, 'x'), frame(Opcode.text, 'a')])).toEqual([text('a')]);
  });

  it('reports a Ping with its payload, empty or 125 bytes long', () => {
    const long = Buffer.alloc(125, 0xab);
    expect(read([frame(Opcode.ping, ''), frame(Opcode.ping, long)])).toEqual([
      { kind: 'ping', hex: '' },
      { kind: 'ping', hex: long.toString('hex') },
    ]);
  });
});

describe('WebSocketFrameReader: Text decoding', () => {
  it('decodes ASCII and other UTF-8 alike, and hands Binary on as bytes', () => {
    expect(
      read([
        frame(Opcode.text, '{"plain":"ascii ~\\u00e9"}'),
        frame(Opcode.text, '{"x":"é€😀"}'),
        frame(Opcode.binary, Buffer.from([0x41, 0x80])),
      ]),
    ).toEqual([
      text('{"plain":"ascii ~\\u00e9"}'),
      text('{"x":"é€😀"}'),
      binary(Buffer.from([0x41, 0x80])),
    ]);
  });

  it('decodes a fragmented message whichever fragment is not ASCII', () => {
    const events = read([
      frame(Opcode.text, 'abc', { fin: false }),
      frame(Opcode.continuation, 'def'),
      frame(Opcode.text, 'abc', { fin: false }),
      frame(Opcode.continuation, 'dé', { fin: false }),
      frame(Opcode.continuation, 'f'),
      frame(Opcode.text, 'é', { fin: false }),
      frame(Opcode.continuation, 'x'),
      frame(Opcode.text, 'a', { fin: false }),
      frame(Opcode.continuation, 'b'),
    ]);
    expect(events).toEqual([text('abcdef'), text('abcdéf'), text('éx'), text('ab')]);
  });

  it('sees a non-ASCII byte at every position of the tail the unmasking loop handles bytewise', () => {
    for (let length = 1; length <= 12; length += 1) {
      for (let high = 0; high < length; high += 1) {
        // 0x80 alone is not UTF-8: taken for ASCII it would be decoded instead of refused.
        const payload = Buffer.alloc(length, 0x61);
        payload[high] = 0x80;
        expect(read([frame(Opcode.text, payload)])).toEqual([
          { kind: 'violation', reason: 'a Text message is not valid UTF-8' },
        ]);
        if (high + 1 < length) {
          payload[high] = 0xc3; // é, as two bytes
          payload[high + 1] = 0xa9;
          expect(read([frame(Opcode.text, payload)])).toEqual([text(payload.toString())]);
        }
      }
    }
  });
});

describe('WebSocketFrameReader: large Text messages as bytes (sink textUtf8)', () => {
  /** Records Text messages that come as bytes with `bytes: true`, their text decoded. */
  class BytesSink extends RecordingSink {
    readonly asBytes: boolean[] = [];
    override text(message: string): void {
      super.text(message);
      this.asBytes.push(false);
    }
    textUtf8(utf8: Buffer): void {
      super.text(utf8.toString());
      this.asBytes.push(true);
    }
  }
  function readAsBytes(chunks: readonly Buffer[]): { events: ReaderEvent[]; asBytes: boolean[] } {
    const sink = new BytesSink();
    const reader = new WebSocketFrameReader(sink);
    for (const chunk of chunks) reader.push(Buffer.from(chunk));
    return { events: sink.events, asBytes: sink.asBytes };
  }
  const below = 'a'.repeat(TEXT_BYTES_FROM - 1);
  const ascii = 'b'.repeat(TEXT_BYTES_FROM);
  const utf8 = 'é'.repeat(TEXT_BYTES_FROM); // two bytes each
  const stream = Buffer.concat([
    frame(Opcode.text, below),
    frame(Opcode.text, ascii),
    frame(Opcode.text, utf8),
    frame(Opcode.text, ascii, { fin: false }),
    frame(Opcode.ping, 'between'),
    frame(Opcode.continuation, 'é'),
    frame(Opcode.text, 'x', { fin: false }),
    frame(Opcode.continuation, below),
  ]);

  it('hands over exactly the messages of TEXT_BYTES_FROM bytes or more as bytes, same text', () => {
    const { events, asBytes } = readAsBytes([stream]);
    expect(events).toEqual(read([stream]));
    expect(asBytes).toEqual([false, true, true, true, true]);
  });

  it('gives the same texts however the input is split', () => {
    const whole = read([stream]);
    const next = random(20_261_202);
    for (let round = 0; round < 200; round += 1) {
      const cuts = [0, ...Array.from({ length: 3 }, () => Math.floor(next() * stream.length))];
      cuts.sort((a, b) => a - b);
      const chunks = cuts.map((cut, index) => stream.subarray(cut, cuts[index + 1]));
      expect(readAsBytes(chunks).events).toEqual(whole);
    }
  });

  it('refuses a large Text message that is not UTF-8, whole or fragmented, as before', () => {
    const bad = Buffer.alloc(TEXT_BYTES_FROM * 2, 0x61);
    bad[TEXT_BYTES_FROM + 3] = 0x80;
    const refused = [{ kind: 'violation', reason: 'a Text message is not valid UTF-8' }];
    for (const frames of [
      [frame(Opcode.text, bad)],
      [
        frame(Opcode.text, bad.subarray(0, TEXT_BYTES_FROM), { fin: false }),
        frame(Opcode.continuation, bad.subarray(TEXT_BYTES_FROM)),
      ],
      [frame(Opcode.text, Buffer.concat([bad.subarray(0, 10), Buffer.from([0xe2, 0x82])]))],
    ]) {
      expect(readAsBytes(frames).events).toEqual(refused);
      expect(read(frames)).toEqual(refused);
    }
  });
});

describe('WebSocketFrameReader: unmasking', () => {
  it('unmasks random payloads of every length from 0 to 300 like the plain XOR', () => {
    const next = random(20_260_101);
    for (let length = 0; length <= 300; length += 1) {
      const payload = randomBytes(next, length);
      const key = [0, 1, 2, 3].map(() => Math.floor(next() * 256)) as unknown as readonly [
        number,
        number,
        number,
        number,
      ];
      const wire = frame(Opcode.binary, payload, { key });
      // Independent of the reader: what is on the wire XOR the key is the payload.
      const header = wire.length - length;
      expect(referenceMask(wire.subarray(header), key)).toEqual(payload);
      expect(read([wire])).toEqual([binary(payload)]);
    }
  });

  it('unmasks a payload whose frame starts at an odd offset in the chunk', () => {
    const next = random(99);
    const payloads = [3, 17, 64, 129].map((length) => randomBytes(next, length));
    const chunk = Buffer.concat([
      frame(Opcode.text, 'x'), // 7 bytes: the next frame starts unaligned
      ...payloads.map((payload) =>
        frame(Opcode.binary, payload, { key: [0xde, 0xad, 0xbe, 0xef] }),
      ),
    ]);
    expect(read([chunk])).toEqual([text('x'), ...payloads.map(binary)]);
  });
});

describe('WebSocketFrameReader: input split anywhere', () => {
  /** Frames of every kind the reader accepts, in one byte stream. */
  const stream = Buffer.concat([
    frame(Opcode.text, '{"id":1,"method":"a"}'),
    frame(Opcode.binary, Buffer.from([0xc3, 0xa9, 0x00, 0xff])),
    frame(Opcode.text, 'frag-', { fin: false }),
    frame(Opcode.ping, 'between'),
    frame(Opcode.continuation, 'mént', { fin: false }),
    frame(Opcode.pong, ''),
    frame(Opcode.continuation, '-end'),
    frame(Opcode.text, Buffer.from([0x61, 0xe2]), { fin: false }), // '€' cut between fragments
    frame(Opcode.continuation, Buffer.from([0x82]), { fin: false }),
    frame(Opcode.continuation, Buffer.from([0xac, 0x62])),
    frame(Opcode.text, 'y'.repeat(200)), // 16-bit length
    frame(Opcode.text, 'z'.repeat(7), { lengthForm: 64 }),
    frame(Opcode.ping, ''),
    frame(Opcode.text, ''),
    frame(Opcode.binary, Buffer.from('tail')),
  ]);
  const whole = read([stream]);

  it('gives the expected events in one chunk', () => {
    expect(whole).toEqual([
      text('{"id":1,"method":"a"}'),
      binary(Buffer.from([0xc3, 0xa9, 0x00, 0xff])),
      { kind: 'ping', hex: Buffer.from('between').toString('hex') },
      text('frag-mént-end'),
      text('a€b'),
      text('y'.repeat(200)),
      text('z'.repeat(7)),
      { kind: 'ping', hex: '' },
      text(''),
      binary(Buffer.from('tail')),
    ]);
  });

  it('gives the same events when split in two at every byte boundary', () => {
    for (let cut = 0; cut <= stream.length; cut += 1) {
      const events = read([stream.subarray(0, cut), stream.subarray(cut)]);
      if (JSON.stringify(events) !== JSON.stringify(whole)) {
        throw new Error(`split at byte ${cut} of ${stream.length} read ${JSON.stringify(events)}`);
      }
    }
  });

  it('gives the same events when split in three at many pairs of boundaries', () => {
    for (let first = 0; first <= stream.length; first += 3) {
      for (let second = first; second <= stream.length; second += 5) {
        const chunks = [
          stream.subarray(0, first),
          stream.subarray(first, second),
          stream.subarray(second),
        ];
        const events = read(chunks);
        if (JSON.stringify(events) !== JSON.stringify(whole)) {
          throw new Error(`split at ${first} and ${second} read ${JSON.stringify(events)}`);
        }
      }
    }
  });

  it('gives the same events when fed byte by byte', () => {
    const bytes = Array.from({ length: stream.length }, (_, index) =>
      stream.subarray(index, index + 1),
    );
    expect(read(bytes)).toEqual(whole);
  });
});

describe('WebSocketFrameReader: violations', () => {
  const next = frame(Opcode.text, 'never read');

  /** Cases that break the protocol, each after a valid message; `limits` where they matter. */
  const violations: Array<{
    name: string;
    frames: Buffer[];
    reason: RegExp;
    limits?: FrameReaderLimits;
  }> = [
    {
      name: 'an unmasked frame',
      frames: [frame(Opcode.text, 'x', { masked: false })],
      reason: /not masked/,
    },
    { name: 'RSV1 set', frames: [frame(Opcode.text, 'x', { rsv: 4 })], reason: /reserved bits/ },
    {
      name: 'RSV3 set on a Ping',
      frames: [frame(Opcode.ping, 'x', { rsv: 1 })],
      reason: /reserved bits/,
    },
    ...[3, 4, 5, 6, 7].map((opcode) => ({
      name: `reserved data opcode ${opcode}`,
      frames: [frame(opcode, 'x')],
      reason: new RegExp(`reserved opcode ${opcode}`),
    })),
    ...[0xb, 0xc, 0xd, 0xe, 0xf].map((opcode) => ({
      name: `reserved control opcode ${opcode}`,
      frames: [frame(opcode, 'x')],
      reason: new RegExp(`reserved opcode ${opcode}`),
    })),
    {
      name: 'a continuation without a message to continue',
      frames: [frame(Opcode.continuation, 'x')],
      reason: /continuation frame without a message/,
    },
    {
      name: 'a new data frame during a fragmented message',
      frames: [frame(Opcode.text, 'a', { fin: false }), frame(Opcode.text, 'b')],
      reason: /new message started before the previous one was finished/,
    },
    {
      name: 'a new Binary frame during a fragmented Text message',
      frames: [frame(Opcode.text, 'a', { fin: false }), frame(Opcode.binary, 'b', { fin: false })],
      reason: /new message started/,
    },
    {
      name: 'a fragmented Ping',
      frames: [frame(Opcode.ping, 'x', { fin: false })],
      reason: /control frame is fragmented/,
    },
    {
      name: 'a fragmented Close',
      frames: [frame(Opcode.close, '', { fin: false })],
      reason: /control frame is fragmented/,
    },
    {
      name: 'a Ping of 126 bytes',
      frames: [frame(Opcode.ping, Buffer.alloc(126))],
      reason: /control frame is longer than 125 bytes/,
    },
    {
      name: 'a Close of 126 bytes',
      frames: [frame(Opcode.close, Buffer.alloc(126))],
      reason: /control frame is longer than 125 bytes/,
    },
    {
      name: 'a frame one byte over the frame limit',
      frames: [frame(Opcode.binary, Buffer.alloc(101))],
      limits: { maxFrameBytes: 100 },
      reason: /frame of 101 bytes is over the limit of 100/,
    },
    {
      name: 'a message over the message limit across fragments',
      frames: [
        frame(Opcode.text, 'abcd', { fin: false }),
        frame(Opcode.continuation, 'efgh', { fin: false }),
        frame(Opcode.continuation, 'ijk'),
      ],
      limits: { maxMessageBytes: 10 },
      reason: /message is over the limit of 10 bytes/,
    },
    {
      name: 'a Text message that is not UTF-8',
      frames: [frame(Opcode.text, Buffer.from([0x7b, 0xff, 0x7d]))],
      reason: /Text message is not valid UTF-8/,
    },
    {
      name: 'an overlong UTF-8 encoding in a Text message',
      frames: [frame(Opcode.text, Buffer.from([0xc0, 0xaf]))],
      reason: /not valid UTF-8/,
    },
    {
      name: 'a fragmented Text message whose joined bytes are not UTF-8',
      frames: [
        frame(Opcode.text, Buffer.from([0x61]), { fin: false }),
        frame(Opcode.continuation, Buffer.from([0xe2, 0x28])),
      ],
      reason: /not valid UTF-8/,
    },
    {
      name: 'a first Text fragment that is not UTF-8, at once (as tungstenite)',
      frames: [frame(Opcode.text, Buffer.from([0x7b, 0xff]), { fin: false })],
      reason: /not valid UTF-8/,
    },
    {
      name: 'a middle Text fragment that completes a character wrongly, at once',
      frames: [
        frame(Opcode.text, Buffer.from([0x61, 0xe2]), { fin: false }),
        frame(Opcode.continuation, Buffer.from([0x28]), { fin: false }),
      ],
      reason: /not valid UTF-8/,
    },
  ];

  for (const { name, frames, reason, limits } of violations) {
    it(`reports ${name} once, and reads nothing after it`, () => {
      // The violation and a valid frame behind it in one chunk, then another chunk.
      const events = read(
        [
          Buffer.concat([frame(Opcode.text, 'before'), ...frames, next]),
          frame(Opcode.text, 'later'),
        ],
        limits,
      );
      expect(events).toHaveLength(2);
      expect(events[0]).toEqual(text('before'));
      expect(events[1]).toEqual({ kind: 'violation', reason: expect.stringMatching(reason) });
      // Byte by byte the outcome is the same.
      const stream = Buffer.concat([frame(Opcode.text, 'before'), ...frames, next]);
      const bytewise = read(
        Array.from({ length: stream.length }, (_, index) => stream.subarray(index, index + 1)),
        limits,
      );
      expect(bytewise).toEqual(events);
    });
  }

  it('accepts a character cut between Text fragments, and one left unfinished until the last', () => {
    expect(
      read([
        frame(Opcode.text, Buffer.from([0x61, 0xc3]), { fin: false }),
        frame(Opcode.continuation, Buffer.from([0xa9])),
        frame(Opcode.text, Buffer.from([0xf0, 0x9d]), { fin: false }),
        frame(Opcode.continuation, Buffer.from([0x84]), { fin: false }),
        frame(Opcode.continuation, Buffer.from([0x9e])),
      ]),
    ).toEqual([text('aé'), text('𝄞')]);
    // Cut off by the end of the message: refused when the message is whole.
    expect(
      read([
        frame(Opcode.text, Buffer.from([0x61, 0xc3]), { fin: false }),
        frame(Opcode.continuation, 'b'),
      ]),
    ).toEqual([{ kind: 'violation', reason: 'a Text message is not valid UTF-8' }]);
  });

  it('starts each fragmented Text message with a fresh UTF-8 check', () => {
    expect(
      read([
        frame(Opcode.text, Buffer.from([0xc3]), { fin: false }),
        frame(Opcode.continuation, Buffer.from([0xa9])),
        frame(Opcode.text, 'ok', { fin: false }),
        frame(Opcode.continuation, 'é', { fin: false }),
        frame(Opcode.continuation, ''),
      ]),
    ).toEqual([text('é'), text('oké')]);
  });

  it('checks no UTF-8 in a fragmented Binary message', () => {
    expect(
      read([
        frame(Opcode.binary, Buffer.from([0xff]), { fin: false }),
        frame(Opcode.continuation, Buffer.from([0xfe])),
      ]),
    ).toEqual([binary(Buffer.from([0xff, 0xfe]))]);
  });

  it('accepts a frame exactly at the frame limit and a message exactly at the message limit', () => {
    const events = read(
      [
        frame(Opcode.binary, Buffer.alloc(100, 1)),
        frame(Opcode.text, 'abcde', { fin: false }),
        frame(Opcode.continuation, 'fghij'),
      ],
      { maxFrameBytes: 100, maxMessageBytes: 100 },
    );
    expect(events).toEqual([binary(Buffer.alloc(100, 1)), text('abcdefghij')]);
    expect(
      read([frame(Opcode.text, 'abcde', { fin: false }), frame(Opcode.continuation, 'fghij')], {
        maxMessageBytes: 10,
      }),
    ).toEqual([text('abcdefghij')]);
  });

  it('refuses a frame over the frame limit from its header alone, before the payload arrives', () => {
    // 16-bit form: first byte, length byte, two length bytes; no masking key, no payload.
    expect(read([Buffer.from([0x82, 0x80 | 126, 0x00, 101])], { maxFrameBytes: 100 })).toEqual([
      { kind: 'violation', reason: 'frame of 101 bytes is over the limit of 100' },
    ]);
    // The default limit (16 MiB), 64-bit form: 16 MiB + 1 is refused, 16 MiB is awaited.
    const header64 = (length: number) =>
      Buffer.from([0x82, 0x80 | 127, ...uint32(Math.floor(length / 2 ** 32)), ...uint32(length)]);
    expect(read([header64(16 * 1024 * 1024 + 1)])).toEqual([
      { kind: 'violation', reason: expect.stringMatching(/over the limit of 16777216/) },
    ]);
    expect(read([header64(16 * 1024 * 1024)])).toEqual([]);
    // A length of 2^32 or more, even 2^63 (invalid in itself).
    expect(read([header64(2 ** 32)])).toEqual([
      { kind: 'violation', reason: expect.stringMatching(/too long/) },
    ]);
    expect(read([Buffer.from([0x82, 0xff, 0x80, 0, 0, 0, 0, 0, 0, 1])])).toEqual([
      { kind: 'violation', reason: expect.stringMatching(/too long/) },
    ]);
  });

  it('refuses a fragment that would take the message over its limit from its header alone', () => {
    const first = frame(Opcode.text, 'abcdef', { fin: false });
    const secondHeader = frame(Opcode.continuation, 'ghijk').subarray(0, 2); // no key, no payload yet
    expect(read([first, secondHeader], { maxMessageBytes: 10 })).toEqual([
      { kind: 'violation', reason: 'message is over the limit of 10 bytes' },
    ]);
  });

  it('does not count control frames between fragments towards the message limit', () => {
    const events = read(
      [
        frame(Opcode.text, 'abcde', { fin: false }),
        frame(Opcode.ping, 'pppppppp'),
        frame(Opcode.continuation, 'fghij'),
      ],
      { maxMessageBytes: 10 },
    );
    expect(events).toEqual([
      { kind: 'ping', hex: Buffer.from('pppppppp').toString('hex') },
      text('abcdefghij'),
    ]);
  });
});

describe('WebSocketFrameReader: the end of reading', () => {
  it('reports a Close as peerClosed and reads nothing after it', () => {
    for (const payload of [Buffer.alloc(0), Buffer.from([0x03, 0xe8, 0x62, 0x79, 0x65])]) {
      const events = read([
        Buffer.concat([
          frame(Opcode.text, 'a'),
          frame(Opcode.close, payload),
          frame(Opcode.text, 'b'),
          frame(Opcode.ping, ''),
        ]),
        frame(Opcode.text, 'c'),
      ]);
      expect(events).toEqual([text('a'), { kind: 'peerClosed' }]);
    }
  });

  it('drops a fragmented message left unfinished by a Close', () => {
    const events = read([
      frame(Opcode.text, 'part', { fin: false }),
      frame(Opcode.close, ''),
      frame(Opcode.continuation, 'rest'),
    ]);
    expect(events).toEqual([{ kind: 'peerClosed' }]);
  });

  it('reads nothing more once stopped, not even the rest of the chunk being read', () => {
    const sink = new RecordingSink();
    const reader = new WebSocketFrameReader({
      text: (message) => {
        sink.text(message);
        reader.stop();
      },
      binary: (data) => sink.binary(data),
      ping: (payload) => sink.ping(payload),
      peerClosed: () => sink.peerClosed(),
      violation: (reason) => sink.violation(reason),
    });
    reader.push(Buffer.concat([frame(Opcode.text, 'first'), frame(Opcode.text, 'second')]));
    reader.push(frame(Opcode.text, 'third'));
    expect(sink.events).toEqual([text('first')]);
  });

  it('forgets a partial frame when stopped', () => {
    const sink = new RecordingSink();
    const reader = new WebSocketFrameReader(sink);
    const bytes = frame(Opcode.text, 'hello');
    reader.push(bytes.subarray(0, 4));
    reader.stop();
    reader.push(Buffer.from(bytes.subarray(4)));
    expect(sink.events).toEqual([]);
  });
});
