/**
 * fastpath/keysInText.ts against its plain twin (bench/plain/server/fastpath/keysInText.ts, one
 * regex over the string tokens): the same count of object keys as written, for any valid JSON
 * text, compact or indented, escapes and duplicate keys included.
 */
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { keysInText as plainKeysInText } from '../../../bench/plain/server/fastpath/keysInText.js';
import { keysInText } from '../../../src/server/fastpath/keysInText.js';

/** Strings heavy in what a scan for quotes can trip on. */
const tricky = fc.string({ unit: fc.constantFrom('"', '\\', ':', ' ', 'a', '{', '}', 'é', '\n') });

describe('keysInText', () => {
  it('counts what its plain twin counts on any JSON text', () => {
    const value = fc.letrec((tie) => ({
      node: fc.oneof(
        { depthSize: 'small' },
        tricky,
        fc.integer(),
        fc.constant(null),
        fc.array(tie('node'), { maxLength: 4 }),
        fc.dictionary(tricky, tie('node'), { maxKeys: 4 }),
      ),
    })).node;
    fc.assert(
      fc.property(value, fc.constantFrom(undefined, 1, '\t'), (json, indent) => {
        const text = JSON.stringify(json, null, indent);
        expect(keysInText(text)).toBe(plainKeysInText(text));
      }),
      { numRuns: 2_000 },
    );
  });

  it('counts duplicate keys as written', () => {
    const text = '{"a":1,"a":{"b\\"":"x:","b\\"" : [ "c" ]}}';
    expect(keysInText(text)).toBe(4);
    expect(plainKeysInText(text)).toBe(4);
  });
});
