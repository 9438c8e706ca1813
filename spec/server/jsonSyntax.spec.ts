/** serde_json-worded syntax errors for malformed executor input. */
import { describe, expect, it } from '@jest/globals';
import { jsonSyntaxError, parseJson, scanJson } from '../../src/server/jsonSyntax.js';

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
  ])('agrees with scanJson on %#', (text) => {
    const scanned = scanJson(text);
    const expected =
      'error' in scanned ? scanned : { value: JSON.parse(text.slice(0, scanned.end)) as unknown };
    expect(parseJson(text)).toEqual(expected);
  });
});
