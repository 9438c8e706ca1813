/** serde_json-worded syntax errors for malformed executor input. */
import { describe, expect, it } from '@jest/globals';
import {
  firstInvalidUtf8,
  jsonSyntaxError,
  parseJson,
  scanJson,
  undecodableJsonError,
} from '../../src/server/jsonSyntax.js';

describe('jsonSyntaxError', () => {
  it.each([
    ['not json', 'expected ident at line 1 column 2'],
    ['xyz', 'expected value at line 1 column 1'],
    ['', 'EOF while parsing a value at line 1 column 0'],
    ['{', 'EOF while parsing an object at line 1 column 1'],
    ['{"a":1', 'EOF while parsing an object at line 1 column 6'],
    ['{"a" 1}', 'expected `:` at line 1 column 6'],
    ['{"a":1 "b"}', 'expected `,` or `}` at line 1 column 8'],
    ['[1,]', 'trailing comma at line 1 column 4'],
    ['{"id":1,"id":2}', 'duplicate JSON object key `id` at line 1 column 12'],
    ['{\n"a":\n-}', 'invalid number at line 3 column 2'],
    ['"\\q"', 'invalid escape at line 1 column 3'],
    [`${'['.repeat(200)}${']'.repeat(200)}`, 'recursion limit exceeded at line 1 column 128'],
    ['{} x', 'trailing characters at line 1 column 4'],
    ['{"a":1}{"b":2}', 'trailing characters at line 1 column 8'],
  ])('%j → %s', (text, message) => {
    expect(jsonSyntaxError(text)).toBe(message);
  });

  it.each([
    '{}',
    '[]',
    '{"id":1,"method":"x","params":{"a":[1,2.5e3,-0,true,false,null,"\\u00e9"]}}',
    ' 1 ',
  ])('accepts %j', (text) => {
    expect(jsonSyntaxError(text)).toBeUndefined();
  });
});

describe('parseJson (fast path of scanJson + JSON.parse)', () => {
  const deep = (levels: number): string => `${'['.repeat(levels)}${']'.repeat(levels)}`;
  it.each([
    '{"id":1,"id":2}',
    '{"a":{"b":1,"b":2}}',
    '[{"x":1},{"y":2,"y":3}]',
    '{"k\\":":1,"k\\":":2}',
    '{"a":"x\\":","b":"\\"","a":1}',
    '{"__proto__":1,"__proto__":2}',
    '{"a":":","b":1}',
    '{"a\\\\":1,"a\\\\":2}',
    '{"x":"\\\\","x":1}',
    '{"a":"\\\\\\"","a":1}',
    '{"a":"\\\\\\":","b":1}',
    '{"a"\t\r\n:1,"b"\n:{"a":2}}',
    '{"a":1} trailing',
    '{"a":1}{"b":2}',
    deep(127),
    deep(128),
    `[${'0,'.repeat(262_143)}0]`,
    `[${'0,'.repeat(262_144)}0]`,
    '{"a" : 1 , "b" :\n[ "c" , { "d" : "e:" } ] }',
    '"\\ud800"',
    'not json',
    '',
    // Short texts without a backslash (checked by one regex):
    '{"":1,"":2}',
    '{"a":1,"b":{"a":2},"c":[{"a":3}]}',
    '{"ab":1,"a":2,"b":3}',
    '{"a":"a","b":"a:","c":"\\"a\\":"}',
    '{"a":1,"b":{"c":{"a":1}},"a":3}',
    '{"a":1,"b":"x","a" \t:2}',
    '{"id":1,"method":"m","params":{"path":"file:///x","sandbox":null}}',
    `{"a":"${'x'.repeat(240)}","a":1}`,
    `{"a":"${'x'.repeat(250)}","a":1}`,
  ])('agrees with scanJson on %#', (text) => {
    expect(parseJson(text)).toEqual(scanned(text));
  });

  it('agrees with scanJson on random small objects with repeated keys', () => {
    let state = 7;
    const next = (n: number): number => {
      state = (state * 1_103_515_245 + 12_345) % 2_147_483_648;
      return state % n;
    };
    const keys = ['a', 'b', 'ab', '', 'a b'];
    const value = (depth: number): string => {
      const kind = next(depth > 2 ? 3 : 5);
      if (kind === 0) return String(next(100));
      if (kind === 1) return JSON.stringify(keys[next(keys.length)]);
      if (kind === 2) return 'null';
      if (kind === 3)
        return `[${Array.from({ length: next(3) }, () => value(depth + 1)).join(',')}]`;
      const entries = Array.from({ length: next(4) }, () => {
        const key = JSON.stringify(keys[next(keys.length)]);
        return `${key}${next(4) === 0 ? ' ' : ''}:${value(depth + 1)}`;
      });
      return `{${entries.join(',')}}`;
    };
    let duplicates = 0;
    for (let round = 0; round < 2_000; round += 1) {
      const text = `{${Array.from({ length: 1 + next(3) }, () => `"${keys[next(keys.length)]}":${value(0)}`).join(',')}}`;
      const expected = scanned(text);
      if ('error' in expected) duplicates += 1;
      expect(parseJson(text)).toEqual(expected);
    }
    expect(duplicates).toBeGreaterThan(100); // the generator does exercise refusals
  });
});

/** What parseJson must give: scanJson's verdict, and JSON.parse's value when it accepts. */
function scanned(text: string): { value: unknown } | { error: string } {
  const result = scanJson(text);
  return 'error' in result ? result : { value: JSON.parse(text.slice(0, result.end)) as unknown };
}

describe('firstInvalidUtf8', () => {
  it('agrees with a fatal TextDecoder on random and edge-case byte strings', () => {
    const fatal = new TextDecoder('utf-8', { fatal: true });
    const cases: Uint8Array[] = [
      Buffer.from('plain ascii'),
      Buffer.from('ünïcødé ✓ 𝄞'),
      Uint8Array.from([0xc0, 0xaf]), // overlong
      Uint8Array.from([0xed, 0xa0, 0x80]), // surrogate
      Uint8Array.from([0xf4, 0x90, 0x80, 0x80]), // above U+10FFFF
      Uint8Array.from([0x41, 0xe2, 0x82]), // cut short
    ];
    let seed = 7;
    for (let index = 0; index < 500; index += 1) {
      const bytes = new Uint8Array(1 + (index % 12));
      for (let at = 0; at < bytes.length; at += 1) {
        seed = (seed * 1103515245 + 12345) >>> 0;
        bytes[at] = seed >>> 24;
      }
      cases.push(bytes);
    }
    for (const bytes of cases) {
      const invalid = firstInvalidUtf8(bytes);
      const valid = (prefix: Uint8Array): boolean => {
        try {
          fatal.decode(prefix);
          return true;
        } catch {
          return false;
        }
      };
      if (invalid === -1) {
        expect(valid(bytes)).toBe(true);
      } else {
        expect(valid(bytes)).toBe(false);
        expect(valid(bytes.subarray(0, invalid))).toBe(true);
      }
    }
  });
});

describe('undecodableJsonError', () => {
  // Latin-1 texts: each `\xff` becomes the byte 0xff, which is never UTF-8.
  it.each([
    ['{"id":7,"method":"a\xff"}', 'invalid unicode code point at line 1 column 21'],
    ['{\xff}', 'key must be a string at line 1 column 2'],
    ['{"b":2}\xff', 'trailing characters at line 1 column 8'],
  ])('%j → %s', (latin1, message) => {
    expect(undecodableJsonError(Buffer.from(latin1, 'latin1'))).toBe(message);
  });
});
