/** The FIFO stock behind pipe-mode stdio: real FIFOs, used once, removed with the stock. */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { describe, expect, it } from '@jest/globals';
import { acquireSharedFifoStock, FifoStock } from '../../src/server/fastpath/fifoStock.js';
import { openStdioPipes } from '../../src/server/stdioPipes.js';

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
