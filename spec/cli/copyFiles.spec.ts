/**
 * The upload source of `execrx cp`: a file's blocks are read only as the writer takes them
 * (at most UPLOAD_READ_AHEAD waiting), whatever the file size, and arrive complete and in order.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { mkdtemp, open, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { concatMap, lastValueFrom, map, timer, toArray } from 'rxjs';
import { blocksOf, UPLOAD_READ_AHEAD } from '../../src/cli/copyFiles.js';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'execrx-blocks-'));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

describe('blocksOf', () => {
  it('reads ahead of a slow writer by at most UPLOAD_READ_AHEAD blocks', async () => {
    const content = randomBytes(9 * 1024 * 1024 + 17);
    const path = join(dir, 'file.bin');
    await writeFile(path, content);
    const handle = await open(path, 'r');
    let emitted = 0;
    let taken = 0;
    let mostWaiting = 0;
    let takenBytes = 0;
    try {
      const blocks = await lastValueFrom(
        blocksOf(handle, path, (bytes) => (takenBytes += bytes)).pipe(
          map((block) => {
            emitted++;
            mostWaiting = Math.max(mostWaiting, emitted - taken);
            return block;
          }),
          // What writeFileStream does: one block at a time, split with subarray when it starts.
          concatMap((block) => {
            taken++;
            const copy = Uint8Array.from(block.subarray(0, block.byteLength));
            return timer(5).pipe(map(() => copy));
          }),
          toArray(),
        ),
      );
      expect(Buffer.concat(blocks).equals(content)).toBe(true);
      expect(blocks).toHaveLength(10);
      expect(takenBytes).toBe(content.length);
      expect(mostWaiting).toBeLessThanOrEqual(UPLOAD_READ_AHEAD);
    } finally {
      await handle.close();
    }
  });

  it('completes at once for an empty file', async () => {
    const path = join(dir, 'empty.bin');
    await writeFile(path, '');
    const handle = await open(path, 'r');
    try {
      expect(await lastValueFrom(blocksOf(handle, path, () => undefined).pipe(toArray()))).toEqual(
        [],
      );
    } finally {
      await handle.close();
    }
  });
});
