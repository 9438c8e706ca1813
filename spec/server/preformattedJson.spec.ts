/** Hand-built reply texts must be exactly what `JSON.stringify` makes of the same value. */
import { describe, expect, it } from '@jest/globals';
import { FileMetadata } from '../../src/server/filesystem.js';

/** Sizes and times as lstat gives them: finite, and large ones in exponent form. */
const NUMBERS = [0, -0, 1, 4096, 1_764_500_000_123, 2 ** 53, 1e21, 1.5];

describe('FileMetadata', () => {
  it('has JSON.stringify’s text of its fields, in the wire order', () => {
    for (const flags of [
      [true, false, false],
      [false, true, true],
    ] as const) {
      for (const number of NUMBERS) {
        const metadata = new FileMetadata(flags[0], flags[1], flags[2], number, number, 7);
        expect(metadata.jsonText()).toBe(JSON.stringify(metadata));
        expect(JSON.parse(metadata.jsonText())).toEqual({
          isDirectory: flags[0],
          isFile: flags[1],
          isSymlink: flags[2],
          size: JSON.parse(JSON.stringify(number)) as unknown,
          createdAtMs: JSON.parse(JSON.stringify(number)) as unknown,
          modifiedAtMs: 7,
        });
      }
    }
  });
});
