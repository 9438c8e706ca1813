/**
 * The executor-wide FIFO stock (fastpath/fifoStock.ts), shared by every live session, so only
 * the first pipe-mode start (not the first of every session) waits for `mkfifo`. Disposed when
 * the last session ends.
 */
import { FifoStock } from './fastpath/fifoStock.js';

export interface FifoStockLease {
  readonly stock: FifoStock;
  /** Ends this user's share; the last one disposes the stock. Idempotent. */
  release(): void;
}

let shared: { stock: FifoStock; users: number } | undefined;

/** A share of the executor-wide stock; the first share makes it. */
export function acquireSharedFifoStock(): FifoStockLease {
  const entry = (shared ??= { stock: new FifoStock(), users: 0 });
  entry.users += 1;
  let released = false;
  return {
    stock: entry.stock,
    release: () => {
      if (released) return;
      released = true;
      entry.users -= 1;
      if (entry.users > 0) return;
      entry.stock.dispose();
      if (shared === entry) shared = undefined;
    },
  };
}
