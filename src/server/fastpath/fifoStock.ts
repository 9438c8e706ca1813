/**
 * Named pipes (FIFOs) made ahead of time, for pipe-mode children's stdio (`stdioPipes.ts`).
 * Node has no pipe(2) or mkfifo(2), and a `mkfifo` process per `process/start` would add a
 * spawn to every start; so one `mkfifo` run makes a batch in a private directory (mode 0700,
 * FIFOs 0600), refilled in the background when the stock runs low. Every FIFO is used once:
 * opened, then unlinked. `dispose` removes the directory. spec/server/fastpath/fifoStock.spec.ts
 * holds it to its plain twin (bench/plain/server/fastpath/fifoStock.ts, one `mkfifo` per take);
 * what the stock saves: docs/performance.md, "Fast paths".
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** FIFOs per `mkfifo` run: 32 starts with `pipeStdin`, so its fork is rare. */
const BATCH_SIZE = 96;
/** Below this many, a refill starts, so a start seldom waits for one. */
const LOW_WATER = 24;

const DIRECTORY_PREFIX = 'execrx-stdio-';

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Removes the stock directories of executors that died without cleaning up (SIGKILL): they
 * are named after their process id.
 */
function sweepAbandonedDirectories(parent: string): void {
  let names: string[];
  try {
    names = readdirSync(parent);
  } catch {
    return;
  }
  for (const name of names) {
    const pid = Number(/^execrx-stdio-(\d+)-/.exec(name)?.[1]);
    if (!Number.isInteger(pid) || pid === process.pid || isAlive(pid)) continue;
    try {
      rmSync(join(parent, name), { recursive: true, force: true });
    } catch {
      /* not ours to remove (another user's, in a sticky /tmp) */
    }
  }
}

/** Never throws: it runs on shutdown paths; a refill in flight removes its directory again. */
function removeQuietly(directory: string): void {
  try {
    rmSync(directory, { recursive: true, force: true });
  } catch {
    /* e.g. ENOTEMPTY while `mkfifo` is still adding to it */
  }
}

/** A fresh private directory for this process's stock. */
function makeDirectory(): string {
  const parent = tmpdir();
  sweepAbandonedDirectories(parent);
  return mkdtempSync(join(parent, `${DIRECTORY_PREFIX}${process.pid}-`));
}

function makeFifos(paths: readonly string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    execFile('mkfifo', ['-m', '600', '--', ...paths], (error, _stdout, stderr) => {
      if (!error) return resolve();
      const detail = stderr.trim() || error.message;
      reject(new Error(`cannot create pipes for the child's stdio: mkfifo failed: ${detail}`));
    });
  });
}

export class FifoStock {
  private directory: string | undefined;
  private readonly ready: string[] = [];
  private refilling: Promise<void> | undefined;
  private made = 0;
  private disposed = false;

  /** `count` unused FIFO paths; the caller opens and unlinks them. */
  async take(count: number): Promise<string[]> {
    // Each refill adds BATCH_SIZE ≥ count, so this loop ends; a failed refill (the directory
    // was swept away under us, say) is retried once in a fresh directory.
    for (let failures = 0; this.ready.length < count;) {
      try {
        await this.refill();
      } catch (error) {
        failures += 1;
        if (failures > 1 || this.disposed) throw error;
      }
    }
    const taken = this.ready.splice(0, count);
    if (this.ready.length < LOW_WATER) this.refill().catch(() => undefined);
    return taken;
  }

  /** Drops the stock (e.g. its directory was cleaned away under a long-running executor). */
  discard(): void {
    this.ready.length = 0;
    this.removeDirectory();
  }

  /** Removes the directory and every unused FIFO; later `take`s fail. */
  dispose(): void {
    this.disposed = true;
    this.discard();
  }

  private refill(): Promise<void> {
    if (this.disposed) return Promise.reject(new Error('the executor is shutting down'));
    this.refilling ??= this.makeBatch().finally(() => {
      this.refilling = undefined;
    });
    return this.refilling;
  }

  private async makeBatch(): Promise<void> {
    this.directory ??= makeDirectory();
    const directory = this.directory;
    const paths = Array.from({ length: BATCH_SIZE }, () => {
      this.made += 1;
      return join(directory, `fifo-${this.made}`);
    });
    try {
      await makeFifos(paths);
    } catch (error) {
      if (this.directory === directory) this.discard();
      throw error;
    } finally {
      // Disposed or discarded meanwhile: removing the directory may have raced with `mkfifo`
      // (ENOTEMPTY), so remove it again now that `mkfifo` is done.
      if (this.disposed || this.directory !== directory) removeQuietly(directory);
    }
    if (this.directory !== directory) return;
    this.ready.push(...paths);
  }

  private removeDirectory(): void {
    if (this.directory === undefined) return;
    removeQuietly(this.directory);
    this.directory = undefined;
  }
}
