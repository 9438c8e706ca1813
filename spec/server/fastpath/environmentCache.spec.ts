/**
 * fastpath/environmentCache.ts against its plain twin
 * (bench/plain/server/fastpath/environmentCache.ts, which works everything out on every call):
 * for the process's own, unchanging answers, the same results in any order of calls, while the
 * cache stays bounded.
 */
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import * as plain from '../../../bench/plain/server/fastpath/environmentCache.js';
import * as fast from '../../../src/server/fastpath/environmentCache.js';

/** A deterministic conversion, counting its calls. */
function converter(): { convert: (path: string) => string | null; calls: () => number } {
  let calls = 0;
  return {
    convert: (path) => {
      calls += 1;
      return path.endsWith('!') ? null : `file://${path}`;
    },
    calls: () => calls,
  };
}

describe('environmentCache', () => {
  it('gives its plain twin’s directory URIs in any order of calls', () => {
    const { convert } = converter();
    fc.assert(
      fc.property(
        fc.array(
          fc.constantFrom(
            ...Array.from({ length: 24 }, (_, index) => `/dir${index}${index % 5 ? '' : '!'}`),
          ),
          {
            maxLength: 60,
          },
        ),
        (paths) => {
          for (const path of paths) {
            expect(fast.cachedDirectoryUri(path, () => convert(path))).toBe(
              plain.cachedDirectoryUri(path, () => convert(path)),
            );
          }
        },
      ),
    );
  });

  it('converts a kept directory once, and keeps at most 16', () => {
    const { convert, calls } = converter();
    const paths = Array.from({ length: 40 }, (_, index) => `/kept${index}`);
    for (let round = 0; round < 3; round += 1)
      for (const path of paths) fast.cachedDirectoryUri(path, () => convert(path));
    // The earlier spec may have filled the cache already: then nothing here is kept.
    expect(calls()).toBeGreaterThanOrEqual(40 + 2 * 24);
    expect(calls()).toBeLessThanOrEqual(3 * 40);
  });

  it('gives its plain twin’s shell, detected once', () => {
    let detections = 0;
    const detect = (): { name: string; path: string } => {
      detections += 1;
      return { name: 'bash', path: '/bin/bash' };
    };
    expect(fast.cachedShell(detect)).toEqual(plain.cachedShell(detect));
    expect(fast.cachedShell(detect)).toEqual(plain.cachedShell(detect));
    expect(detections).toBe(3);
  });
});
