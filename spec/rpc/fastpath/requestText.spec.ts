/**
 * requestText and processWriteParams (src/rpc/fastpath/requestText.ts) against their plain twin
 * (bench/plain/rpc/fastpath/requestText.ts, a plain object and `JSON.stringify`): the same text
 * for every request, whether or not it takes the shortcut.
 */
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import * as twin from '../../../bench/plain/rpc/fastpath/requestText.js';
import { processWriteParams, requestText } from '../../../src/rpc/fastpath/requestText.js';

/** Strings JSON escapes (quotes, backslashes, control characters, lone surrogates) included. */
const anyText = fc.oneof(
  fc.string(),
  fc.string({ unit: 'binary' }),
  fc.constantFrom('"', '\\', '\n', '\u0000', '\ud800', 'p"\\x'),
);
const data = fc.oneof(fc.uint8Array({ maxLength: 300 }), fc.string({ unit: 'binary' }));
const ids = fc.nat();

describe('requestText (fast path) against JSON.stringify (plain twin)', () => {
  it('writes a process/write of processWriteParams exactly as JSON.stringify', () => {
    fc.assert(
      fc.property(ids, anyText, data, anyText, (id, processId, bytes, writeId) => {
        const fast = processWriteParams(processId, bytes, writeId);
        const plain = twin.processWriteParams(processId, bytes, writeId);
        expect(fast).toEqual(plain);
        expect(requestText(id, 'process/write', fast)).toBe(
          twin.requestText(id, 'process/write', plain),
        );
        expect(JSON.parse(requestText(id, 'process/write', fast))).toEqual({
          id,
          method: 'process/write',
          params: plain,
        });
      }),
      { numRuns: 2000 },
    );
  });

  it('writes every other request, params not made here, as JSON.stringify', () => {
    const writeLike = fc.record(
      {
        processId: anyText,
        chunk: fc.oneof(anyText, fc.base64String()),
        writeId: anyText,
        extra: fc.jsonValue(),
      },
      { requiredKeys: [] },
    );
    fc.assert(
      fc.property(
        ids,
        fc.oneof(fc.constant('process/write'), fc.string()),
        fc.oneof(writeLike, fc.jsonValue(), fc.constant(undefined)),
        (id, method, params) => {
          expect(requestText(id, method, params)).toBe(twin.requestText(id, method, params));
        },
      ),
      { numRuns: 2000 },
    );
  });

  it('takes the shortcut only for process/write (the same params under another method)', () => {
    const params = processWriteParams('p"1', 'x', 'w');
    expect(requestText(3, 'fs/writeBlock', params)).toBe(
      JSON.stringify({ id: 3, method: 'fs/writeBlock', params }),
    );
  });

  it('freezes the params, so a chunk cannot be swapped for one that needs escaping', () => {
    const params = processWriteParams('p', 'x', 'w');
    expect(Object.isFrozen(params)).toBe(true);
    expect(() => {
      (params as { chunk: string }).chunk = '"';
    }).toThrow(TypeError);
    expect(requestText(1, 'process/write', params)).toBe(
      JSON.stringify({
        id: 1,
        method: 'process/write',
        params: { processId: 'p', chunk: 'eA==', writeId: 'w' },
      }),
    );
  });
});
