/**
 * `pathFromUri`'s verbatim fast path must agree with the full URL-parser conversion on every
 * URI: same path, or the same error. Checked on hand-picked cases and a seeded random sample
 * over an alphabet full of characters the URL parser escapes, decodes or normalises.
 */
import { describe, expect, it } from '@jest/globals';
import { pathFromUri, pathFromUriParsed } from '../../src/server/hostPath.js';
import { seededRandom as random } from '../support/seededRandom.js';

function outcome(convert: (uri: string) => string, uri: string): string {
  try {
    return `path ${convert(uri)}`;
  } catch (error) {
    return `error ${(error as Error).message}`;
  }
}

const ALPHABET = [
  ..."aZ09-._~!$&'()*+,;=@/",
  ...'%2e%2F%41%%g',
  '\\',
  ':',
  '|',
  '?',
  '#',
  ' ',
  '\t',
  '\n',
  '"',
  '<',
  '>',
  '`',
  '{',
  '}',
  '^',
  'é',
  '\u0000',
  '.',
  '..',
  '/./',
  '/../',
  'C:',
];

describe('pathFromUri', () => {
  it.each([
    'file:///',
    'file:///tmp',
    'file:///tmp/a b',
    'file:///tmp/./x',
    'file:///tmp/../x',
    'file:///tmp/..',
    'file:///tmp/.',
    'file:///tmp/.hidden/..x/x..',
    'file:////double',
    'file:///a//b/',
    'file:///C:/x',
    'file:///c|/x',
    'file:///a%2Fb',
    'file:///a%20b',
    'file:///a?q',
    'file:///a#f',
    'file:///a\\b',
    'file://host/a',
    'FILE:///a',
    'file:/a',
    'file:a',
    'http:///a',
    '/a',
    "file:///~user/it's+(1),[x];=@!$&*",
  ])('agrees with the URL parser on %j', (uri) => {
    expect(outcome(pathFromUri, uri)).toBe(outcome(pathFromUriParsed, uri));
  });

  it('agrees with the URL parser on 20,000 random file URIs', () => {
    const next = random(4);
    const disagreements: string[] = [];
    for (let sample = 0; sample < 20_000; sample += 1) {
      let uri = 'file:///';
      const length = Math.floor(next() * 8);
      for (let index = 0; index < length; index += 1) {
        uri += ALPHABET[Math.floor(next() * ALPHABET.length)] as string;
      }
      if (outcome(pathFromUri, uri) !== outcome(pathFromUriParsed, uri)) disagreements.push(uri);
    }
    expect(disagreements).toEqual([]);
  });
});
