/**
 * parseOutputNotification and parseOutputNotificationUtf8 (src/rpc/fastpath/outputNotification.ts)
 * against their plain twin, `JSON.parse` and `classifyMessage`
 * (bench/plain/rpc/fastpath/outputNotification.ts): whatever the fast path recognises, from
 * the text or from its UTF-8 bytes, the twin reads the same way, its decoded chunk is the
 * chunk's bytes, and every text in the executors' layout with a canonical chunk is recognised.
 */
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { parseOutputNotification as twin } from '../../../bench/plain/rpc/fastpath/outputNotification.js';
import { isStandardBase64 } from '../../../src/protocol/base64.js';
import {
  decodedChunkOf,
  parseOutputNotification,
  parseOutputNotificationUtf8,
} from '../../../src/rpc/fastpath/outputNotification.js';

/** Base64 of random bytes, perhaps spoiled at one place (escapes and control characters too). */
const chunks = fc.oneof(
  fc.uint8Array({ maxLength: 40 }).map((bytes) => Buffer.from(bytes).toString('base64')),
  fc
    .tuple(
      fc.uint8Array({ minLength: 1, maxLength: 40 }),
      fc.nat(),
      fc.constantFrom(
        '-',
        '_',
        '=',
        ' ',
        '\n',
        '!',
        '\u0000',
        'é',
        '\u0141',
        '\\u0041',
        '\\"',
        '"',
        '\\',
        '==',
        '',
        // UTF-8 lead bytes whose low 7 bits are in the alphabet (C3 = 'C' + 0x80) when read
        // from bytes; above U+00FF, a low byte in the alphabet when read from a string (Ł: 0x41).
        'ñ',
        'Á',
        'Ã',
        '\u00c3',
        '€',
        '😀',
        '\t',
      ),
      fc.boolean(),
    )
    .map(([bytes, at, spoiler, replace]) => {
      const text = Buffer.from(bytes).toString('base64');
      const index = at % text.length;
      return text.slice(0, index) + spoiler + text.slice(index + (replace ? 1 : 0));
    }),
);

/**
 * Base64 of 1 or 2 bytes (so padded) at the end of more, with the last character before the
 * padding replaced: mostly padding bits that are not zero (`QR==`, which decodes as `QQ==`).
 */
const paddedChunks = fc
  .tuple(fc.uint8Array({ minLength: 1, maxLength: 40 }), fc.integer({ min: 0, max: 63 }))
  .filter(([bytes]) => bytes.length % 3 !== 0)
  .map(([bytes, value]) => {
    const text = Buffer.from(bytes).toString('base64');
    const at = text.indexOf('=') - 1;
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
    return text.slice(0, at) + alphabet[value] + text.slice(at + 1);
  });

/** Raw JSON text of a field value: well-formed, or spoiled. */
const seqs = fc.oneof(
  fc.maxSafeNat().map(String),
  fc.constantFrom(
    '0',
    '01',
    '-1',
    '1.0',
    '1e3',
    '9007199254740993',
    '123456789012345',
    '1234567890123456',
    '',
    ' 1',
    '"1"',
    'null',
  ),
);
const processIds = fc.oneof(
  fc.string({ maxLength: 10 }),
  fc.string({ unit: fc.constantFrom('a', '\\', '"', '\n', '\u0001', 'é', '\ud800'), maxLength: 6 }),
  fc.string({ minLength: 250, maxLength: 260, unit: fc.constantFrom('a', 'b') }),
);
const streams = fc.constantFrom('stdout', 'stderr', 'pty', 'stdin', 'stdoutx', '');

/** Mostly `good`, sometimes one of `spoiled`. */
function mostly<T>(good: fc.Arbitrary<T>, spoiled: fc.Arbitrary<T>): fc.Arbitrary<T> {
  return fc.oneof({ arbitrary: good, weight: 4 }, { arbitrary: spoiled, weight: 1 });
}

/** A text in the executors' layout, with each piece possibly spoiled or padded. */
const layoutTexts = fc
  .record({
    processId: processIds,
    rawId: fc.boolean(),
    seq: mostly(fc.maxSafeNat().map(String), seqs),
    stream: mostly(fc.constantFrom('stdout', 'stderr', 'pty'), streams),
    chunk: fc.oneof({ arbitrary: chunks, weight: 4 }, { arbitrary: paddedChunks, weight: 1 }),
    rawChunk: mostly(fc.constant(true), fc.constant(false)),
    method: mostly(
      fc.constant('process/output'),
      fc.constantFrom('process/outputs', 'process/exited'),
    ),
    spoil: mostly<readonly [string, string]>(
      fc.constant(['', '']),
      fc.constantFrom(
        ['"seq"', '"seq" '],
        ['"seq"', '"sex"'],
        ['"stream"', '"Stream"'],
        ['"chunk"', '"chunks"'],
        ['"chunk":', 'Achunk":'],
        ['"seq":', 'A"seq"'],
        ['"params"', '"params" '],
        ['":{"', '":{ "'],
        ['","stream', '" ,"stream'],
        [',"stream', ',"seq":1,"stream'],
      ),
    ),
    tail: mostly(
      fc.constant('"}}'),
      fc.constantFrom('"} }', '"}}\n', '"},"x":1}', '","x":1}}', '"}}}', '"', '"]}', '}}}', '"}'),
    ),
  })
  .map(
    ({ processId, rawId, seq, stream, chunk, rawChunk, method, spoil: [from, to], tail }) =>
      (
        `{"method":"${method}","params":{"processId":${rawId ? `"${processId}"` : JSON.stringify(processId)}` +
        `,"seq":${seq},"stream":"${stream}","chunk":`
      ).replace(from!, to!) +
      `${rawChunk ? `"${chunk}` : JSON.stringify(chunk).slice(0, -1)}${tail}`,
  );

/** Both entry points, on `text` and on its UTF-8 bytes, agree with the twin when they answer. */
function expectSameAsTwin(text: string): void {
  expectRecognisedAsTwin(text, parseOutputNotification(text));
  const utf8 = Buffer.from(text, 'utf8');
  expectRecognisedAsTwin(utf8.toString('utf8'), parseOutputNotificationUtf8(utf8));
}

function expectRecognisedAsTwin(text: string, fast: ReturnType<typeof twin>): void {
  if (fast === undefined) return;
  expect({ text, fast }).toEqual({ text, fast: twin(text) });
  const { chunk } = fast.params as { chunk: string };
  // The canonical form, checked the slow way: the alphabet, and encoding the bytes again.
  expect(isStandardBase64(chunk)).toBe(true);
  const bytes = Buffer.from(chunk, 'base64');
  expect(bytes.toString('base64')).toBe(chunk);
  expect(Buffer.from(decodedChunkOf(fast.params)!).equals(bytes)).toBe(true);
}

describe('parseOutputNotification (fast path) against JSON.parse (plain twin)', () => {
  it('recognises only what JSON.parse reads the same way, with the chunk decoded', () => {
    fc.assert(fc.property(layoutTexts, expectSameAsTwin), { numRuns: 5000 });
  });

  it('declines other texts and other messages', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.string(),
          fc.jsonValue().map((value) => JSON.stringify(value)),
          fc.jsonValue().map((params) => JSON.stringify({ method: 'process/output', params })),
        ),
        expectSameAsTwin,
      ),
      { numRuns: 2000 },
    );
    for (const text of [
      '{"id":1,"result":{}}',
      '{"method":"process/exited","params":{"processId":"p","seq":2,"exitCode":0}}',
      '{"method":"process/output","params":{"processId":"p","seq":1,"stream":"stdout","chunk":"QR=="}}',
      '{"method":"process/output","params":{"processId":"p","seq":1,"stream":"stdout","chunk":"QUJD"}',
      '{"method":"process/output","params":{"processId":"p","seq":1,"stream":"stdout","chunk":"QUŁD"}}',
      '{"method":"process/output","params":{"processId":"p","seq":1,"stream":"stdout","chunk":"QU-D"}}',
      '{"method":"process/output","params":{"processId":"p","seq":1,"stream":"stdout","chunk":"QU_D"}}',
      '{"method":"process/output","params":{"processId":"p","seq":1,"stream":"stdout","chunk":"QQ=="}',
      '{"method":"process/output","params":{"processId":"p","seq":1,"stream":"stdout","chunk":"Q"}}',
    ]) {
      expect(parseOutputNotification(text)).toBeUndefined();
      expect(parseOutputNotificationUtf8(Buffer.from(text))).toBeUndefined();
    }
  });

  it('recognises every notification in the executors layout with a canonical chunk', () => {
    const plainId = fc.string({
      maxLength: 256,
      unit: fc
        .string({ minLength: 1, maxLength: 1 })
        .filter((c) => c >= ' ' && c !== '"' && c !== '\\'),
    });
    fc.assert(
      fc.property(
        plainId,
        fc.integer({ min: 0, max: 10 ** 15 - 1 }),
        fc.constantFrom('stdout', 'stderr', 'pty'),
        fc.uint8Array({ maxLength: 200 }),
        (processId, seq, stream, bytes) => {
          const chunk = Buffer.from(bytes).toString('base64');
          // The executors' text: JSON.stringify of { method, params } in this key order.
          const text = JSON.stringify({
            method: 'process/output',
            params: { processId, seq, stream, chunk },
          });
          for (const fast of [
            parseOutputNotification(text),
            parseOutputNotificationUtf8(Buffer.from(text)),
          ]) {
            expect(fast).toEqual(twin(text));
            expect(Buffer.from(decodedChunkOf(fast!.params)!).equals(Buffer.from(bytes))).toBe(
              true,
            );
          }
        },
      ),
    );
  });

  it('attaches the bytes invisibly: the params copy and compare as plain JSON', () => {
    const text =
      '{"method":"process/output","params":{"processId":"p1","seq":7,"stream":"pty","chunk":"aGkK"}}';
    const fast = parseOutputNotification(text)!;
    expect(Object.keys(fast.params as object)).toEqual(['processId', 'seq', 'stream', 'chunk']);
    expect(JSON.stringify(fast)).toBe(text);
    expect(decodedChunkOf({ ...(fast.params as object) })).toBeUndefined();
    expect(decodedChunkOf(JSON.parse(text).params)).toBeUndefined();
  });
});
