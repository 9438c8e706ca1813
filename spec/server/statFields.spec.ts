/**
 * statFields: the binding path and the public path give what `lstatSync` / `statSync` give,
 * numbers and errors alike, on a small fixture tree.
 */
import {
  lstatSync,
  mkdirSync,
  mkdtempSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from '@jest/globals';
import {
  lstatFields,
  publicLstatFields,
  publicStatFields,
  statFields,
  statSource,
  type StatFields,
} from '../../src/server/statFields.js';

const root = mkdtempSync(join(tmpdir(), 'execrx-statfields-'));
const file = join(root, 'f');
const dir = join(root, 'd');
const link = join(root, 'link');
const loop = join(root, 'loop');
writeFileSync(file, 'twelve bytes');
mkdirSync(dir);
symlinkSync(file, link);
symlinkSync(loop, loop);

afterAll(() => rmSync(root, { recursive: true, force: true }));

function expected(stats: {
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

/** The error `operation` throws, reduced to what callers read. */
function failure(operation: () => unknown): { code: unknown; message: string } {
  try {
    operation();
  } catch (error) {
    const { code, message } = error as { code?: unknown; message: string };
    return { code, message };
  }
  throw new Error('expected a failure');
}

it('reads through the fs binding on this POSIX Node', () => {
  // The public fallback works everywhere; this says the fast path was not lost to a refusal.
  expect(statSource).toBe(process.platform === 'win32' ? 'public' : 'binding');
});

describe.each([
  ['lstatFields', lstatFields, publicLstatFields, lstatSync],
  ['statFields', statFields, publicStatFields, statSync],
] as const)('%s', (_name, fields, publicFields, nodeStat) => {
  it.each([
    ['a file', file],
    ['a directory', dir],
    ['a symlink', link],
  ])('gives what Node gives for %s', (_what, path) => {
    const want = expected(nodeStat(path));
    expect(fields(path)).toEqual(want);
    expect(publicFields(path)).toEqual(want);
  });

  it('returns numbers of its own (the binding reuses one array)', () => {
    const first = fields(file);
    fields(dir);
    expect(first).toEqual(expected(nodeStat(file)));
  });

  it.each([
    ['a missing path', join(root, 'missing')],
    ['a path through a file', join(file, 'x')],
    ['a path with a NUL', join(root, 'a\0b')],
  ])('fails as Node does for %s', (_what, path) => {
    const want = failure(() => nodeStat(path));
    expect(failure(() => fields(path))).toEqual(want);
    expect(failure(() => publicFields(path))).toEqual(want);
  });
});

it('stat follows a symlink loop into ELOOP, lstat does not', () => {
  expect(failure(() => statFields(loop))).toEqual(failure(() => statSync(loop)));
  expect(failure(() => statFields(loop)).code).toBe('ELOOP');
  expect(lstatFields(loop)).toEqual(expected(lstatSync(loop)));
});
