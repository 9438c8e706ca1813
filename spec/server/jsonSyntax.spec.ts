/** serde_json-worded syntax errors for malformed executor input. */
import { describe, expect, it } from '@jest/globals';
import { jsonSyntaxError } from '../../src/server/jsonSyntax.js';

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
