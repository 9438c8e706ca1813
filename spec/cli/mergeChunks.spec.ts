/**
 * scripts/mergeChunks.mjs (run by scripts/bundle-cli.mjs on the CLI's chunks): chunks a load
 * path always loads together become one file that behaves as the chunks did, and a chunk whose
 * export would go stale is refused. The built CLI itself is exercised by the other CLI specs.
 */
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
const REPO = resolve('.');

/** Modules under `dist/`: `main.js` loads `a.js`, `b.js` and `c.js` with `import()` (chunks: their shared modules). */
const MODULES: Record<string, string> = {
  // Two shared modules with the same local names; esbuild keeps them in separate chunks
  // (s1 is reached by a and b, s2 by a and c) and names their locals per chunk.
  's1.js':
    "const tag = 'one'; let calls = 0; export function one() { calls += 1; return `${tag}${calls}`; }",
  's2.js':
    "import { one } from './s1.js'; const tag = 'two'; export function two() { return one() + tag; }",
  'a.js':
    "import { one } from './s1.js'; import { two } from './s2.js'; export const a = () => [one(), two()];",
  'b.js': "import { one } from './s1.js'; export const b = () => one();",
  'c.js': "import { two } from './s2.js'; export const c = () => two();",
  'main.js':
    "export async function main() { const { a } = await import('./a.js'); const { b } = await import('./b.js'); const { c } = await import('./c.js'); return [...a(), b(), c()]; }",
};

/** A script that bundles `dist/main.js` with splitting, merges by `loadPaths` if given, runs main(). */
function script(dir: string, loadPaths: string[][] | undefined): string {
  return `
import { build } from ${JSON.stringify(join(REPO, 'node_modules/esbuild/lib/main.js'))};
import { mergeChunks } from ${JSON.stringify(join(REPO, 'scripts/mergeChunks.mjs'))};
import { readdirSync } from 'node:fs';
const dist = ${JSON.stringify(join(dir, 'dist'))};
const out = ${JSON.stringify(join(dir, 'out'))};
const { metafile } = await build({ entryPoints: [dist + '/main.js'], outdir: out, bundle: true,
  splitting: true, format: 'esm', platform: 'node', chunkNames: 'chunks/[name]-[hash]',
  metafile: true, logLevel: 'silent' });
const loadPaths = ${JSON.stringify(loadPaths ?? null)};
if (loadPaths !== null) await mergeChunks(metafile, process.cwd(), dist, loadPaths);
const result = await import(out + '/main.js').then((m) => m.main());
const chunks = readdirSync(out + '/chunks').filter((name) => /^(chunk|merged)-/.test(name)).sort();
console.log(JSON.stringify({ result, chunks }));
`;
}

describe('mergeChunks', () => {
  let dir: string;

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'execrx-merge-'));
    await mkdir(join(dir, 'dist'));
  });

  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  async function runScript(modules: Record<string, string>, loadPaths?: string[][]) {
    for (const [name, text] of Object.entries(modules)) {
      await writeFile(join(dir, 'dist', name), text);
    }
    await writeFile(join(dir, 'run.mjs'), script(dir, loadPaths));
    const { stdout } = await run(process.execPath, [join(dir, 'run.mjs')], { cwd: dir });
    return JSON.parse(stdout) as { result: string[]; chunks: string[] };
  }

  it('merges the chunks a path loads together into one file that behaves as they did', async () => {
    const plain = await runScript(MODULES);
    expect(plain.result).toEqual(['one1', 'one2two', 'one3', 'one4two']);
    expect(plain.chunks).toHaveLength(2);
    const merged = await runScript(MODULES, [['a.js']]);
    expect(merged.result).toEqual(plain.result);
    expect(merged.chunks).toEqual(['merged-0.js']);
  });

  it('leaves the chunks alone when no path loads them together', async () => {
    const merged = await runScript(MODULES, [['b.js'], ['c.js']]);
    expect(merged.result).toEqual(['one1', 'one2two', 'one3', 'one4two']);
    expect(merged.chunks).toHaveLength(2);
    expect(merged.chunks.some((name) => name.startsWith('merged-'))).toBe(false);
  });

  it('refuses a chunk that assigns one of its exports after it ran', async () => {
    const modules = {
      ...MODULES,
      's1.js': 'export let calls = 0; export function one() { calls += 1; return `one${calls}`; }',
      'b.js': "import { one, calls } from './s1.js'; export const b = () => one() + calls;",
    };
    await expect(runScript(modules, [['a.js']])).rejects.toMatchObject({
      stderr: expect.stringMatching(/assigns its export `calls`; it cannot be merged/),
    });
  });
});
