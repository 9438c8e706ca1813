/**
 * The FIFO stock behind pipe-mode stdio: real FIFOs, used once, removed with the stock; what it
 * hands out is what its plain twin (bench/plain/server/fastpath/fifoStock.ts, one `mkfifo` per
 * take) hands out.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { FifoStock as PlainFifoStock } from '../../../bench/plain/server/fastpath/fifoStock.js';
import { FifoStock } from '../../../src/server/fastpath/fifoStock.js';
import { acquireSharedFifoStock } from '../../../src/server/sharedFifoStock.js';
import { openStdioPipes } from '../../../src/server/stdioPipes.js';

describe('FifoStock', () => {
  it('hands out distinct FIFOs in a private directory, and dispose removes it', async () => {
    const stock = new FifoStock();
    const taken = [...(await stock.take(3)), ...(await stock.take(2))];
    expect(new Set(taken).size).toBe(5);
    for (const path of taken) expect(statSync(path).isFIFO()).toBe(true);
    const directory = dirname(taken[0] as string);
    expect(statSync(directory).mode & 0o777).toBe(0o700);
    expect(statSync(taken[0] as string).mode & 0o777).toBe(0o600);
    stock.dispose();
    expect(existsSync(directory)).toBe(false);
    await expect(stock.take(1)).rejects.toThrow('the executor is shutting down');
  });

  it('recovers when its directory is removed under it', async () => {
    const stock = new FifoStock();
    const [first] = await stock.take(1);
    rmSync(dirname(first as string), { recursive: true });
    // Stale paths fail to open (ENOENT): openStdioPipes starts a fresh stock and retries.
    const pipes = await openStdioPipes(stock, true);
    expect(pipes.childStdio.every((fd) => typeof fd === 'number')).toBe(true);
    pipes.closeChildEnds();
    pipes.closeParentEnds();
    // A refill into the vanished directory fails (mkfifo): retried once in a fresh one.
    const [second] = await stock.take(1);
    rmSync(dirname(second as string), { recursive: true });
    const batch = await stock.take(96);
    for (const path of batch) expect(statSync(path).isFIFO()).toBe(true);
    stock.dispose();
  });

  it('removes the directories of dead executors when it makes its own', async () => {
    const dead = spawnSync('true').pid as number; // reaped: that pid is free now
    const abandoned = join(tmpdir(), `execrx-stdio-${dead}-abandoned`);
    mkdirSync(abandoned, { recursive: true });
    writeFileSync(join(abandoned, 'fifo-1'), '');
    const stock = new FifoStock();
    await stock.take(1);
    expect(existsSync(abandoned)).toBe(false);
    stock.dispose();
  });
});

describe('acquireSharedFifoStock', () => {
  it('shares one stock among live users; the last release disposes it', async () => {
    const first = acquireSharedFifoStock();
    const second = acquireSharedFifoStock();
    expect(second.stock).toBe(first.stock);
    const directory = dirname((await first.stock.take(1))[0] as string);
    first.release();
    first.release(); // idempotent: does not count twice
    expect(existsSync(directory)).toBe(true);
    second.release();
    expect(existsSync(directory)).toBe(false);
    const third = acquireSharedFifoStock();
    expect(third.stock).not.toBe(first.stock);
    third.release();
  });
});

describe('FifoStock against its plain twin', () => {
  /** What a sequence of takes got: per take, the count and whether each is a fresh 0600 FIFO. */
  async function takes(
    stock: { take(count: number): Promise<string[]>; dispose(): void },
    counts: readonly number[],
  ): Promise<string[]> {
    const seen = new Set<string>();
    const outcome: string[] = [];
    try {
      for (const count of counts) {
        const paths = await stock.take(count);
        const fresh = paths.every((path) => !seen.has(path) && statSync(path).isFIFO());
        const modes = paths.map((path) => (statSync(path).mode & 0o777).toString(8));
        const directories = paths.map((path) => (statSync(dirname(path)).mode & 0o777).toString(8));
        for (const path of paths) seen.add(path);
        outcome.push(`${paths.length} fresh=${fresh} ${[...new Set([...modes, ...directories])]}`);
      }
    } finally {
      stock.dispose();
    }
    return outcome;
  }

  it('hands out the same: distinct fresh FIFOs, mode 0600, in a 0700 directory', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.integer({ min: 1, max: 3 }), { minLength: 1, maxLength: 40 }),
        async (counts) => {
          expect(await takes(new FifoStock(), counts)).toEqual(
            await takes(new PlainFifoStock(), counts),
          );
        },
      ),
      { numRuns: 8 },
    );
  });
});
