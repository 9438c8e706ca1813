/**
 * The upload source of `execrx cp`: a file's blocks are read only as the writer takes them
 * (it pulls them; at most UPLOAD_READ_AHEAD in memory), whatever the file size, complete and in order.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { mkdtemp, open, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { blocksOf, UPLOAD_READ_AHEAD } from '../../src/cli/copyFiles.js';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'execrx-blocks-'));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

describe('blocksOf', () => {
  it('reads a block only when the writer pulls it, and counts it once written', async () => {
    const content = randomBytes(9 * 1024 * 1024 + 17);
    const path = join(dir, 'file.bin');
    await writeFile(path, content);
    const handle = await open(path, 'r');
    let takenBytes = 0;
    let mostInMemory = 0;
    try {
      const blocks: Uint8Array[] = [];
      let pulled = 0;
      for await (const block of blocksOf(handle, path, (bytes) => (takenBytes += bytes))) {
        pulled++;
        // A slow writer: until it comes back, nothing else is read.
        await new Promise((resolve) => setTimeout(resolve, 5));
        mostInMemory = Math.max(mostInMemory, pulled - blocks.length);
        expect(takenBytes).toBe(blocks.reduce((sum, b) => sum + b.byteLength, 0));
        blocks.push(Uint8Array.from(block));
      }
      expect(Buffer.concat(blocks).equals(content)).toBe(true);
      expect(blocks).toHaveLength(10);
      expect(takenBytes).toBe(content.length);
      expect(mostInMemory).toBeLessThanOrEqual(UPLOAD_READ_AHEAD);
    } finally {
      await handle.close();
    }
  });

  it('completes at once for an empty file', async () => {
    const path = join(dir, 'empty.bin');
    await writeFile(path, '');
    const handle = await open(path, 'r');
    try {
      const blocks: Uint8Array[] = [];
      for await (const block of blocksOf(handle, path, () => undefined)) blocks.push(block);
      expect(blocks).toEqual([]);
    } finally {
      await handle.close();
    }
  });
});
