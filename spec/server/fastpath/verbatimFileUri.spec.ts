/**
 * fastpath/verbatimFileUri.ts: a path it returns is the URL parser's (`pathFromUriParsed`) for
 * the same URI, and its plain twin (bench/plain/server/fastpath/verbatimFileUri.ts) leaves every
 * URI to the parser; so `pathFromUri` gives the parser's answer either way. Checked on URIs
 * over an alphabet full of what the parser escapes, decodes or normalises.
 */
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { verbatimFilePath as plainVerbatim } from '../../../bench/plain/server/fastpath/verbatimFileUri.js';
import { verbatimFilePath } from '../../../src/server/fastpath/verbatimFileUri.js';
import { pathFromUriParsed } from '../../../src/server/hostPath.js';

const PIECES = [
  ..."aZ09-._~!$&'()*+,;=@/",
  ...['%2e', '%2F', '%41', '%', '%g', '\\', ':', '|', '?', '#', ' ', '\t', '\n', '"', '<', '>'],
  ...['`', '{', '}', '^', 'é', '\u0000', '.', '..', '/./', '/../', 'C:'],
];

function parsed(uri: string): string {
  try {
    return `path ${pathFromUriParsed(uri)}`;
  } catch (error) {
    return `error ${(error as Error).message}`;
  }
}

describe('verbatimFilePath', () => {
  it('returns only what the URL parser returns', () => {
    fc.assert(
      fc.property(fc.array(fc.constantFrom(...PIECES), { maxLength: 8 }), (pieces) => {
        const uri = `file:///${pieces.join('')}`;
        expect(plainVerbatim(uri)).toBeUndefined();
        const fast = verbatimFilePath(uri);
        if (fast !== undefined) expect(`path ${fast}`).toBe(parsed(uri));
      }),
      { numRuns: 20_000 },
    );
  });

  it('takes the common URIs', () => {
    expect(verbatimFilePath('file:///tmp/a-b_c.txt')).toBe('/tmp/a-b_c.txt');
    expect(verbatimFilePath('file:///tmp/../x')).toBeUndefined();
  });
});
