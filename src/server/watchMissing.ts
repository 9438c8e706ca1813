/**
 * `fs/watchMissing` and its `fs/missingChanged` notification, as codex 0.169.0 does them
 * (probed; spec/fixtures/FINDINGS.md "fs/watchMissing"):
 *
 * - `{watchId: u64, missing: [uri], present?: uri|null}` → `{watching: bool}`.
 * - One watch per connection. A `watchId` not above every id this connection sent before
 *   answers `watching: false` and leaves the current watch alone; any other request replaces
 *   the current watch, even when it then answers `false`.
 * - `watching: false` also when `missing` is empty or longer than 64, when a missing path
 *   already exists (a dangling symlink exists), when `present` does not exist, or when more
 *   than 64 directories would be watched (every existing ancestor of each missing path and of
 *   `present`).
 * - The watch fires once, `fs/missingChanged {watchId}`, on the first change to any entry on
 *   the way to a missing path (creating an intermediate directory counts; so does removing or
 *   renaming a watched ancestor), or to `present` itself (modifying, touching, removing it;
 *   changes inside a `present` directory do not count). Reads do not fire it.
 * - Watches belong to the connection: a resumed session does not carry them over.
 *
 * Guarded by spec/server/watchMissing.spec.ts and spec/conformance/capabilitiesSuite.ts.
 */
import { watch, type FSWatcher } from 'node:fs';
import { basename, dirname, relative, sep } from 'node:path';
import { fsPath } from './hostPath.js';
import { entryExists, isDirectory } from './pathProbe.js';

const MAX_MISSING_PATHS = 64;
const MAX_WATCHED_DIRECTORIES = 64;

export interface WatchMissingParams {
  watchId: number;
  missing: string[];
  present?: string | null;
}

interface ActiveWatch {
  readonly watchId: number;
  readonly watchers: FSWatcher[];
}

type Notify = (method: string, params: unknown) => void;

/** Adds every existing ancestor of `path` with the name of its next step toward `path`. */
async function addAncestors(path: string, names: Map<string, Set<string>>): Promise<void> {
  let child = path;
  let dir = dirname(path);
  let reachedExisting = false;
  for (;;) {
    if (reachedExisting || (await isDirectory(dir))) {
      reachedExisting = true;
      const step = relative(dir, child).split(sep)[0] ?? basename(child);
      let set = names.get(dir);
      if (!set) names.set(dir, (set = new Set()));
      set.add(step);
    }
    if (dirname(dir) === dir) return;
    child = dir;
    dir = dirname(dir);
  }
}

/** The `fs/watchMissing` state of one connection. */
export class MissingWatches {
  /** Highest `watchId` this connection has sent; undefined before the first. */
  private lastWatchId: number | undefined;
  private current: ActiveWatch | undefined;
  private closed = false;
  /** Requests are taken one at a time, in arrival order (the checks in between are async). */
  private queue: Promise<unknown> = Promise.resolve();

  constructor(private readonly notify: Notify) {}

  async watch(params: WatchMissingParams): Promise<{ watching: boolean }> {
    const missing = params.missing.map(fsPath);
    const present = params.present == null ? undefined : fsPath(params.present);
    const result = this.queue.then(() => this.register(params.watchId, missing, present));
    this.queue = result.catch(() => undefined);
    return result;
  }

  private async register(
    watchId: number,
    missing: string[],
    present: string | undefined,
  ): Promise<{ watching: boolean }> {
    if (this.closed) return { watching: false };
    if (this.lastWatchId !== undefined && watchId <= this.lastWatchId) return { watching: false };
    this.lastWatchId = watchId;
    this.cancel();
    if (missing.length === 0 || missing.length > MAX_MISSING_PATHS) return { watching: false };
    for (const path of missing) if (await entryExists(path)) return { watching: false };
    if (present !== undefined && !(await entryExists(present))) return { watching: false };

    const names = new Map<string, Set<string>>();
    for (const path of missing) await addAncestors(path, names);
    if (present !== undefined) await addAncestors(present, names);
    if (names.size > MAX_WATCHED_DIRECTORIES || this.closed) return { watching: false };

    const watchers: FSWatcher[] = [];
    const active: ActiveWatch = { watchId, watchers };
    const fire = () => this.fire(active);
    try {
      for (const [dir, steps] of names) {
        const watcher = watch(dir, { persistent: false }, (_event, filename) => {
          if (filename === null || steps.has(filename.toString())) fire();
        });
        watcher.on('error', fire);
        watchers.push(watcher);
      }
    } catch {
      for (const watcher of watchers) watcher.close();
      return { watching: false };
    }
    this.current = active;
    // A change between the checks above and the watchers starting is still reported.
    void this.recheck(active, missing, present);
    return { watching: true };
  }

  private async recheck(active: ActiveWatch, missing: string[], present?: string): Promise<void> {
    for (const path of missing) if (await entryExists(path)) return this.fire(active);
    if (present !== undefined && !(await entryExists(present))) this.fire(active);
  }

  private fire(active: ActiveWatch): void {
    if (this.current !== active) return;
    this.cancel();
    this.notify('fs/missingChanged', { watchId: active.watchId });
  }

  private cancel(): void {
    const active = this.current;
    this.current = undefined;
    for (const watcher of active?.watchers ?? []) watcher.close();
  }

  /** Stops the connection's watch (the connection ended). */
  close(): void {
    this.closed = true;
    this.cancel();
  }
}
