/**
 * `MissingWatches` (fs/watchMissing) beyond the conformance suite: overlapping requests, the
 * connection's end, and the notification's shape. Real directories and inotify, no mocks.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdir, mkdtemp, realpath, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { MissingWatches } from '../../src/server/watchMissing.js';

let root = '';
let count = 0;
const fresh = async () => {
  const dir = join(root, `case-${(count += 1)}`);
  await mkdir(dir);
  return dir;
};
const uri = (path: string) => pathToFileURL(path).href;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Collects notifications; `next()` waits (bounded) for the next one. */
function recorder() {
  const seen: unknown[] = [];
  const watches = new MissingWatches((method, params) => seen.push({ method, params }));
  const next = async (index: number) => {
    for (let waited = 0; seen.length <= index && waited < 5_000; waited += 20) await sleep(20);
    return seen[index];
  };
  return { seen, watches, next };
}

beforeAll(async () => {
  root = await realpath(await mkdtemp(join(tmpdir(), 'execrx-watch-')));
});

afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

describe('MissingWatches', () => {
  it('sends fs/missingChanged {watchId} once', async () => {
    const dir = await fresh();
    const { seen, watches, next } = recorder();
    await expect(watches.watch({ watchId: 7, missing: [uri(join(dir, 'a'))] })).resolves.toEqual({
      watching: true,
    });
    await writeFile(join(dir, 'a'), '');
    expect(await next(0)).toEqual({ method: 'fs/missingChanged', params: { watchId: 7 } });
    await writeFile(join(dir, 'a'), 'again');
    await sleep(300);
    expect(seen).toHaveLength(1);
    watches.close();
  });

  it('takes overlapping requests in order: the later one replaces the earlier', async () => {
    const dir = await fresh();
    const { seen, watches, next } = recorder();
    const [earlier, later] = await Promise.all([
      watches.watch({ watchId: 1, missing: [uri(join(dir, 'a'))] }),
      watches.watch({ watchId: 2, missing: [uri(join(dir, 'a'))] }),
    ]);
    expect([earlier.watching, later.watching]).toEqual([true, true]);
    await writeFile(join(dir, 'a'), '');
    expect(await next(0)).toEqual({ method: 'fs/missingChanged', params: { watchId: 2 } });
    await sleep(300);
    expect(seen).toHaveLength(1);
    watches.close();
  });

  it('fires when a watched ancestor is renamed away', async () => {
    const dir = await fresh();
    await mkdir(join(dir, 'parent'));
    const { watches, next } = recorder();
    await watches.watch({ watchId: 1, missing: [uri(join(dir, 'parent', 'child'))] });
    await rename(join(dir, 'parent'), join(dir, 'moved'));
    expect(await next(0)).toEqual({ method: 'fs/missingChanged', params: { watchId: 1 } });
    watches.close();
  });

  it('stops watching when the connection ends and refuses new watches afterwards', async () => {
    const dir = await fresh();
    const { seen, watches } = recorder();
    await watches.watch({ watchId: 1, missing: [uri(join(dir, 'a'))] });
    watches.close();
    await writeFile(join(dir, 'a'), '');
    expect(await watches.watch({ watchId: 2, missing: [uri(join(dir, 'b'))] })).toEqual({
      watching: false,
    });
    await sleep(300);
    expect(seen).toEqual([]);
  });

  it('rejects a URI that is not a file: URI of this host', async () => {
    const { watches } = recorder();
    await expect(watches.watch({ watchId: 1, missing: ['relative'] })).rejects.toMatchObject({
      code: -32602,
      message: 'invalid URI: relative URL without a base',
    });
    await expect(
      watches.watch({ watchId: 2, missing: [uri(join(root, 'x'))], present: 'http://h/x' }),
    ).rejects.toMatchObject({ code: -32602 });
    watches.close();
  });
});
