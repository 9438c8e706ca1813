/**
 * fastpath/resultReply.ts against its plain twin (bench/plain/server/fastpath/resultReply.ts,
 * `JSON.stringify({ id, result })`): byte-identical reply texts, for `FileMetadata` (whose text
 * is built by hand) and for any other result.
 */
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { resultReplyText as plainReply } from '../../../bench/plain/server/fastpath/resultReply.js';
import { resultReplyText } from '../../../src/server/fastpath/resultReply.js';
import { FileMetadata } from '../../../src/server/filesystem.js';

/** Sizes and times as lstat gives them: finite, large ones in exponent form. */
const number = fc.oneof(
  fc.constantFrom(0, -0, 1, 4096, 1_764_500_000_123, 2 ** 53, 1e21, 1.5),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.nat(),
);
const id = fc.oneof(fc.integer({ min: 0, max: 2 ** 53 - 1 }), fc.string());

describe('resultReplyText', () => {
  it('writes FileMetadata replies as its plain twin does', () => {
    fc.assert(
      fc.property(
        id,
        fc.tuple(fc.boolean(), fc.boolean(), fc.boolean()),
        fc.tuple(number, number, number),
        (replyId, [isDirectory, isFile, isSymlink], [size, createdAtMs, modifiedAtMs]) => {
          const metadata = new FileMetadata(
            isDirectory,
            isFile,
            isSymlink,
            size,
            createdAtMs,
            modifiedAtMs,
          );
          expect(resultReplyText(replyId, metadata)).toBe(plainReply(replyId, metadata));
        },
      ),
      { numRuns: 2_000 },
    );
  });

  it('writes any other result as its plain twin does', () => {
    fc.assert(
      fc.property(id, fc.jsonValue(), (replyId, result) => {
        expect(resultReplyText(replyId, result)).toBe(plainReply(replyId, result));
      }),
    );
  });
});
