/**
 * `lstat` and `stat` reduced to the four numbers `fs/getMetadata` reports, as cheaply as Node
 * allows.
 *
 * `fs.lstatSync` validates its arguments in JavaScript and builds a whole `Stats`: fourteen
 * fields and, on Node 20, four `Date`s made eagerly. On a cold request that was ~20 µs of our
 * ~150 µs answer, about 3% of the round trip (bench/executor-cold-latency.ts). The binding
 * under `lstatSync` hands out the raw numbers; it is reached through `process.binding`, a
 * legacy API (DEP0111), so it is used only where it is safe to: on POSIX, without the
 * permission model, without `--pending-deprecation` (which would print a warning), and only
 * if it agrees with `lstatSync` on a probe when this module loads. Otherwise, and for a path
 * that holds a NUL (which `lstatSync` refuses with its own error), the public calls answer.
 * statFields.spec holds both to `lstatSync`.
 */
import { lstatSync, statSync } from 'node:fs';

export interface StatFields {
  readonly mode: number;
  readonly size: number;
  readonly modifiedAtMs: number;
  readonly createdAtMs: number;
}

/** Where the numbers come from: Node's fs binding, or the public `Stats`. */
export type StatSource = 'binding' | 'public';

/** The part of Node's fs binding used here; stat calls return a shared Float64Array. */
interface FsBinding {
  lstat(path: string, bigint: false, request: undefined, throwIfNoEntry: true): Float64Array;
  stat(path: string, bigint: false, request: undefined, throwIfNoEntry: true): Float64Array;
}

// Offsets in the binding's stat array (src/node_file.h: FsStatsOffset).
const MODE = 1;
const SIZE = 8;
const MTIME_SEC = 12;
const MTIME_NSEC = 13;
const BIRTHTIME_SEC = 16;
const BIRTHTIME_NSEC = 17;

/** Milliseconds from a timespec, computed as Node computes `Stats.*Ms`. */
const millisOf = (seconds: number, nanoseconds: number): number =>
  seconds * 1000 + nanoseconds / 1e6;

function fromArray(values: Float64Array): StatFields {
  return {
    mode: values[MODE] as number,
    size: values[SIZE] as number,
    modifiedAtMs: millisOf(values[MTIME_SEC] as number, values[MTIME_NSEC] as number),
    createdAtMs: millisOf(values[BIRTHTIME_SEC] as number, values[BIRTHTIME_NSEC] as number),
  };
}

function fromStats(stats: {
  mode: number;
  size: number;
  mtimeMs: number;
  birthtimeMs: number;
}): StatFields {
  return {
    mode: stats.mode,
    size: stats.size,
    modifiedAtMs: stats.mtimeMs,
    createdAtMs: stats.birthtimeMs,
  };
}

/** `lstat(path)` through the public API. */
export const publicLstatFields = (path: string): StatFields => fromStats(lstatSync(path));
/** `stat(path)` through the public API. */
export const publicStatFields = (path: string): StatFields => fromStats(statSync(path));

function pendingDeprecationRequested(): boolean {
  return (
    process.execArgv.includes('--pending-deprecation') ||
    (process.env['NODE_OPTIONS'] ?? '').includes('--pending-deprecation') ||
    process.env['NODE_PENDING_DEPRECATION'] === '1'
  );
}

/** Node's fs binding when it is safe to use and agrees with `lstatSync`, else undefined. */
function usableBinding(): FsBinding | undefined {
  if (
    process.platform === 'win32' ||
    Reflect.has(process, 'permission') ||
    pendingDeprecationRequested()
  )
    return undefined;
  try {
    const binding = (process as unknown as { binding(name: string): FsBinding }).binding('fs');
    const probe = process.execPath;
    const expected = publicLstatFields(probe);
    const actual = fromArray(binding.lstat(probe, false, undefined, true));
    const agrees =
      actual.mode === expected.mode &&
      actual.size === expected.size &&
      actual.modifiedAtMs === expected.modifiedAtMs &&
      actual.createdAtMs === expected.createdAtMs;
    return agrees ? binding : undefined;
  } catch {
    return undefined;
  }
}

const binding = usableBinding();

export const statSource: StatSource = binding === undefined ? 'public' : 'binding';

/** `lstat(path)`: throws Node's error (with `code`) as `lstatSync` does. */
export const lstatFields: (path: string) => StatFields =
  binding === undefined
    ? publicLstatFields
    : (path) =>
        path.includes('\0')
          ? publicLstatFields(path)
          : fromArray(binding.lstat(path, false, undefined, true));

/** `stat(path)`, following symlinks: throws Node's error (with `code`) as `statSync` does. */
export const statFields: (path: string) => StatFields =
  binding === undefined
    ? publicStatFields
    : (path) =>
        path.includes('\0')
          ? publicStatFields(path)
          : fromArray(binding.stat(path, false, undefined, true));
