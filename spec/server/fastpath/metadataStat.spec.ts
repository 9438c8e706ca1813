/**
 * fastpath/metadataStat.ts (synchronous `lstat`/`stat`) against its plain twin
 * (bench/plain/server/fastpath/metadataStat.ts, the asynchronous calls): the same stats, or
 * the same OS error, for every kind of path `fs/getMetadata` meets.
 */
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync, type Stats } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { metadataStats as plainStats } from '../../../bench/plain/server/fastpath/metadataStat.js';
import { metadataStats } from '../../../src/server/fastpath/metadataStat.js';

const root = mkdtempSync(join(tmpdir(), 'execrx-metadata-stat-'));
writeFileSync(join(root, 'file'), 'twelve bytes');
mkdirSync(join(root, 'dir'));
symlinkSync(join(root, 'file'), join(root, 'to-file'));
symlinkSync(join(root, 'dir'), join(root, 'to-dir'));
symlinkSync(join(root, 'missing'), join(root, 'dangling'));
symlinkSync(join(root, 'loop'), join(root, 'loop'));
const NAMES = ['file', 'dir', 'to-file', 'to-dir', 'dangling', 'loop', 'missing', 'file/below'];

afterAll(() => rmSync(root, { recursive: true, force: true }));

function described(stats: Stats): string {
  return `${stats.mode} ${stats.size} ${stats.ino} ${stats.mtimeMs} ${stats.birthtimeMs}`;
}

async function outcome(stat: typeof metadataStats, path: string, follow: boolean): Promise<string> {
  try {
    const { link, target } = await stat(path, follow);
    return `link ${described(link)} target ${target === link ? 'same' : described(target)}`;
  } catch (error) {
    return `error ${(error as NodeJS.ErrnoException).code}`;
  }
}

describe('metadataStats', () => {
  it('is synchronous', () => {
    expect(metadataStats(join(root, 'file'), true)).not.toBeInstanceOf(Promise);
  });

  it('gives its plain twin’s stats or error for every kind of path', async () => {
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...NAMES), fc.boolean(), async (name, follow) => {
        const path = join(root, name);
        expect(await outcome(metadataStats, path, follow)).toBe(
          await outcome(plainStats, path, follow),
        );
      }),
      { numRuns: 64 },
    );
  });
});
