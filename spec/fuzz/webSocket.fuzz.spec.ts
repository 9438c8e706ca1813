/**
 * Fuzzing the executor's WebSocket reading side: any bytes, cut anywhere, give either the
 * messages that were sent or one violation, never a throw, and never a message over the limits;
 * the opening handshake answers any header set with a refusal or a go-ahead.
 */
import { describe, expect, it, jest } from '@jest/globals';
import fc from 'fast-check';
import {
  WebSocketFrameReader,
  type FrameReaderSink,
} from '../../src/server/webSocketFrameReader.js';
import {
  acceptKey,
  closingResponse,
  upgradeRefusal,
  type UpgradeRequest,
} from '../../src/server/webSocketUpgrade.js';
import { clientFrame, Opcode } from '../support/clientFrames.js';
import { bytes, cutAt, fuzzParameters, fuzzTimeoutMs, mutated } from './fuzzRuns.js';

jest.setTimeout(fuzzTimeoutMs());

const LIMITS = { maxFrameBytes: 1024, maxMessageBytes: 4096 };

type Event =
  | { kind: 'text'; value: string }
  | { kind: 'binary'; value: Buffer }
  | { kind: 'ping'; value: Buffer }
  | { kind: 'closed' }
  | { kind: 'violation'; reason: string };

/** Feeds `chunks` to a fresh reader and records what it reports; a throw fails the property. */
function read(chunks: readonly Uint8Array[]): Event[] {
  const events: Event[] = [];
  const sink: FrameReaderSink = {
    text: (value) => events.push({ kind: 'text', value }),
    binary: (value) => events.push({ kind: 'binary', value: Buffer.from(value) }),
    ping: (value) => events.push({ kind: 'ping', value: Buffer.from(value) }),
    peerClosed: () => events.push({ kind: 'closed' }),
    violation: (reason) => events.push({ kind: 'violation', reason }),
  };
  const reader = new WebSocketFrameReader(sink, LIMITS);
  // Copies: the reader unmasks in place, and a case may reuse its input.
  for (const chunk of chunks) reader.push(Buffer.from(chunk));
  return events;
}

/** Whatever happened, the reader's report is well formed: at most one ending, and it is last. */
function expectWellFormed(events: Event[]): void {
  const endings = events.filter((e) => e.kind === 'closed' || e.kind === 'violation');
  expect(endings.length).toBeLessThanOrEqual(1);
  if (endings.length === 1) expect(events.at(-1)).toBe(endings[0]);
  for (const event of events) {
    if (event.kind === 'text') expect(Buffer.byteLength(event.value)).toBeLessThanOrEqual(4096);
    if (event.kind === 'binary') expect(event.value.length).toBeLessThanOrEqual(4096);
    if (event.kind === 'ping') expect(event.value.length).toBeLessThanOrEqual(125);
    if (event.kind === 'violation') expect(event.reason).toMatch(/\S/);
  }
}

/** One message a client may send, with how it is cut into fragments. */
const message = fc.oneof(
  fc.record({
    kind: fc.constant('text' as const),
    value: fc.string({ unit: 'binary', maxLength: 600 }),
    pieces: fc.array(fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }), {
      maxLength: 3,
    }),
  }),
  fc.record({
    kind: fc.constant('binary' as const),
    value: fc.uint8Array({ maxLength: 600 }).map((b) => Buffer.from(b)),
    pieces: fc.array(fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }), {
      maxLength: 3,
    }),
  }),
  fc.record({
    kind: fc.constant('ping' as const),
    value: fc.uint8Array({ maxLength: 125 }).map((b) => Buffer.from(b)),
    pieces: fc.constant([] as number[]),
  }),
);
const maskKey = fc.tuple(fc.nat(255), fc.nat(255), fc.nat(255), fc.nat(255));
const lengthForm = fc.constantFrom(undefined, 16 as const, 64 as const);

type Message = typeof message extends fc.Arbitrary<infer T> ? T : never;

function encode(m: Message, key: [number, number, number, number], form?: 16 | 64): Buffer {
  if (m.kind === 'ping') return clientFrame(Opcode.ping, m.value, { key });
  const payload = Buffer.from(m.value);
  const fragments = cutAt(payload, m.pieces);
  const opcode = m.kind === 'text' ? Opcode.text : Opcode.binary;
  return Buffer.concat(
    fragments.map((fragment, index) =>
      clientFrame(index === 0 ? opcode : Opcode.continuation, Buffer.from(fragment), {
        fin: index === fragments.length - 1,
        key,
        ...(form === undefined ? {} : { lengthForm: form }),
      }),
    ),
  );
}

function expected(m: Message): Event {
  if (m.kind === 'text') return { kind: 'text', value: m.value };
  if (m.kind === 'binary') return { kind: 'binary', value: m.value };
  return { kind: 'ping', value: m.value };
}

const fractions = fc.array(fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }), {
  maxLength: 8,
});

describe('fuzz: WebSocket frame reader', () => {
  it('delivers every valid message exactly once and in order, however the bytes are cut', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(message, maskKey, lengthForm), { maxLength: 6 }),
        fractions,
        (messages, cuts) => {
          const wire = Buffer.concat(messages.map(([m, key, form]) => encode(m, key, form)));
          const events = read(cutAt(wire, cuts));
          expect(events).toEqual(messages.map(([m]) => expected(m)));
        },
      ),
      fuzzParameters(),
    );
  });

  it('answers arbitrary bytes with messages and at most one ending, never a throw', () => {
    fc.assert(
      fc.property(fc.array(bytes(300), { maxLength: 6 }), (chunks) => {
        expectWellFormed(read(chunks));
      }),
      fuzzParameters(),
    );
  });

  it('answers damaged valid frames the same way', () => {
    const valid = Buffer.concat([
      clientFrame(Opcode.text, '{"id":1,"method":"initialize","params":{}}', { fin: false }),
      clientFrame(Opcode.continuation, 'ünïcödé', {}),
      clientFrame(Opcode.ping, 'p'),
      clientFrame(Opcode.binary, Buffer.alloc(300, 7), { lengthForm: 64 }),
      clientFrame(Opcode.close, Buffer.from([3, 232])),
    ]);
    fc.assert(
      fc.property(mutated(valid), fractions, (damaged, cuts) => {
        expectWellFormed(read(cutAt(damaged, cuts)));
      }),
      fuzzParameters(),
    );
  });

  it('refuses a header announcing more than the limits before any payload arrives', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: LIMITS.maxFrameBytes + 1, max: 2 ** 32 - 1 }),
        fc.constantFrom(Opcode.text, Opcode.binary),
        (announced, opcode) => {
          const header = clientFrame(opcode, Buffer.alloc(0), {
            announcedLength: announced,
            lengthForm: 64,
          });
          const events = read([header]);
          expect(events).toEqual([{ kind: 'violation', reason: expect.any(String) }]);
        },
      ),
      fuzzParameters(),
    );
  });
});

describe('fuzz: WebSocket frame reader memory', () => {
  it('holds memory in proportion to the bytes received, not to the lengths headers announce', () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 2 ** 21, max: 16 * 2 ** 20 }), { minLength: 4, maxLength: 4 }),
        fc.nat(1000),
        (announced, sent) => {
          const before = process.memoryUsage().arrayBuffers;
          const readers = announced.map((length) => {
            // Default limits: a 16 MiB frame is acceptable, so the reader waits for its bytes.
            const reader = new WebSocketFrameReader({
              text: () => undefined,
              binary: () => undefined,
              ping: () => undefined,
              peerClosed: () => undefined,
              violation: () => undefined,
            });
            const frame = clientFrame(Opcode.binary, Buffer.alloc(sent), {
              announcedLength: length,
              lengthForm: 64,
            });
            reader.push(frame);
            return reader;
          });
          const grown = process.memoryUsage().arrayBuffers - before;
          expect(grown).toBeLessThan(4 * 1024 * 1024);
          expect(readers).toHaveLength(4);
        },
      ),
      fuzzParameters(20),
    );
  });
});

const headerValue = fc.oneof(
  fc.constantFrom(
    'Upgrade',
    'upgrade',
    'keep-alive, Upgrade',
    'websocket',
    'WebSocket',
    '13',
    '8',
    '',
  ),
  fc.string({ maxLength: 40 }),
);

describe('fuzz: WebSocket opening handshake', () => {
  it('answers any request with a known refusal or a go-ahead, never a throw', () => {
    const statuses = new Set([400, 405, 426]);
    fc.assert(
      fc.property(
        fc.constantFrom('GET', 'POST', 'HEAD', 'get', undefined),
        fc.constantFrom('1.1', '1.0', '2.0', ''),
        fc.dictionary(
          fc.constantFrom(
            'connection',
            'upgrade',
            'sec-websocket-version',
            'sec-websocket-key',
            'origin',
          ),
          fc.oneof(headerValue, fc.array(headerValue, { minLength: 1, maxLength: 3 })),
        ),
        (method, httpVersion, headers) => {
          const distinct = Object.fromEntries(
            Object.entries(headers).map(([name, value]) => [name, ([] as string[]).concat(value)]),
          );
          const request: UpgradeRequest = {
            ...(method === undefined ? {} : { method }),
            httpVersion,
            headers,
            headersDistinct: distinct,
          };
          const refusal = upgradeRefusal(request);
          if (refusal === undefined) {
            expect(method).toBe('GET');
            expect(typeof acceptKey(distinct['sec-websocket-key']![0]!)).toBe('string');
          } else {
            expect(statuses.has(refusal.status)).toBe(true);
            const response = closingResponse(httpVersion, refusal, method);
            expect(response).toMatch(/^HTTP\/1\.[01] \d{3} /);
            expect(response).toContain(`content-length: ${Buffer.byteLength(refusal.body)}`);
          }
        },
      ),
      fuzzParameters(),
    );
  });

  it('computes an accept key for any key text', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 100 }), (key) => {
        expect(acceptKey(key)).toMatch(/^[A-Za-z0-9+/]{27}=$/);
      }),
      fuzzParameters(),
    );
  });
});
