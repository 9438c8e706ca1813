/**
 * parseOutputNotification (src/rpc/fastpath/outputNotification.ts) against its plain twin,
 * `JSON.parse` and `classifyMessage` (bench/plain/rpc/fastpath/outputNotification.ts): whatever
 * the fast path recognises, the twin reads the same way, its decoded chunk is the chunk's
 * bytes, and every text in the executors' layout with a canonical chunk is recognised.
 */
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { parseOutputNotification as twin } from '../../../bench/plain/rpc/fastpath/outputNotification.js';
import { isStandardBase64 } from '../../../src/protocol/base64.js';
import {
  decodedChunkOf,
  parseOutputNotification,
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
      ),
      fc.boolean(),
    )
    .map(([bytes, at, spoiler, replace]) => {
      const text = Buffer.from(bytes).toString('base64');
      const index = at % text.length;
      return text.slice(0, index) + spoiler + text.slice(index + (replace ? 1 : 0));
    }),
);

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
    chunk: chunks,
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

function expectSameAsTwin(text: string): void {
  const fast = parseOutputNotification(text);
  if (fast === undefined) return;
  expect({ text, fast }).toEqual({ text, fast: twin(text) });
  const { chunk } = fast.params as { chunk: string };
  expect(isStandardBase64(chunk)).toBe(true);
  expect(Buffer.from(decodedChunkOf(fast.params)!).equals(Buffer.from(chunk, 'base64'))).toBe(true);
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
    ]) {
      expect(parseOutputNotification(text)).toBeUndefined();
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
          const fast = parseOutputNotification(text);
          expect(fast).toEqual(twin(text));
          expect(Buffer.from(decodedChunkOf(fast!.params)!).equals(Buffer.from(bytes))).toBe(true);
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
