/**
 * Plain twin of src/server/fastpath/fifoStock.ts: no stock; every `take` runs `mkfifo` for the
 * FIFOs it hands out, in a private directory (mode 0700, FIFOs 0600) made once.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export class FifoStock {
  private directory: string | undefined;
  private made = 0;
  private disposed = false;

  /** `count` fresh FIFO paths; the caller opens and unlinks them. */
  take(count: number): Promise<string[]> {
    if (this.disposed) return Promise.reject(new Error('the executor is shutting down'));
    const directory = (this.directory ??= mkdtempSync(
      join(tmpdir(), `execrx-stdio-${process.pid}-`),
    ));
    const paths = Array.from({ length: count }, () => join(directory, `fifo-${(this.made += 1)}`));
    return new Promise((resolve, reject) => {
      execFile('mkfifo', ['-m', '600', '--', ...paths], (error, _stdout, stderr) => {
        if (!error) return resolve(paths);
        const detail = stderr.trim() || error.message;
        reject(new Error(`cannot create pipes for the child's stdio: mkfifo failed: ${detail}`));
      });
    });
  }

  discard(): void {
    if (this.directory !== undefined) rmSync(this.directory, { recursive: true, force: true });
    this.directory = undefined;
  }

  dispose(): void {
    this.disposed = true;
    this.discard();
  }
}
