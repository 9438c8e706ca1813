/**
 * Bundles the CLI — `dist/cli/main.js` and all it imports, rxjs and ws included — into
 * `dist/cli/main.bundle.js` (which `bin/execrx.js` loads) and the chunks it loads on demand,
 * `dist/cli/chunks/`. Node 20 took ~0.4 s to find and compile those ~600 files one by one;
 * from a few files it takes a fraction. The library's entry points (`exports`) stay unbundled.
 *
 * A command loads only what it reaches: every `await import()` of the CLI (the command's own
 * module, the executor, the rendezvous, the Noise channel) starts a chunk (`splitting`), and
 * within a chunk only the modules whose exports are used are kept:
 * - the package's own modules are declared free of side effects (none of `src/` runs anything
 *   at load time that another module relies on without importing a name from it), so a barrel
 *   (`index.ts`) no longer drags in every module it re-exports;
 * - rxjs comes from its ES module build (its `node` export is CommonJS, which esbuild cannot
 *   trim: all ~400 modules would load).
 * Then the chunks a load path always loads together are merged into one file each
 * (mergeChunks.mjs), so a fresh `run` loads a few files instead of dozens.
 *
 * The same CLI is also built as one CommonJS script, `dist/cli/main.cjs`, which
 * `src/cli/fastpath/codeCache.ts` compiles with a V8 code cache (an ES module cannot take
 * one on Node 20); the bundles above are its plain path.
 *
 * Usage: `node scripts/bundle-cli.mjs [packageDir]` (default: this package), after `tsc`.
 */
import { build } from 'esbuild';
import { realpathSync } from 'node:fs';
import { isBuiltin } from 'node:module';
import { rm } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { mergeChunks } from './mergeChunks.mjs';

const packageDir = process.argv[2] ?? fileURLToPath(new URL('..', import.meta.url));
const dist = join(packageDir, 'dist');
const require = (await import('node:module')).createRequire(join(packageDir, 'package.json'));

/** rxjs's ES module build (package export condition `es2015`) instead of its CommonJS one. */
const rxjsEsm = join(dirname(require.resolve('rxjs/package.json')), 'dist/esm/index.js');

/** Where esbuild sees the compiled modules (it resolves symlinks, e.g. a bench's package copy). */
const distReal = realpathSync(dist);

/**
 * Native addons, loaded from node_modules at run time: bundled, they would look for their
 * prebuilt binaries beside the bundle. `bufferutil` (optional) masks and unmasks `ws` frames
 * natively; without it `ws` does it in JavaScript.
 */
const external = ['@lydell/node-pty', 'bufferutil'];

const trimmablePlugin = {
  name: 'execrx-cli-trimmable',
  setup(pluginBuild) {
    pluginBuild.onResolve({ filter: /^rxjs$/ }, () => ({ path: rxjsEsm }));
    pluginBuild.onResolve({ filter: /^\.\.?\// }, (args) =>
      args.resolveDir.startsWith(distReal)
        ? { path: resolve(args.resolveDir, args.path), sideEffects: false }
        : undefined,
    );
  },
};

await rm(join(dist, 'cli/chunks'), { recursive: true, force: true });
const { metafile } = await build({
  entryPoints: [join(dist, 'cli/main.js')],
  outdir: join(dist, 'cli'),
  entryNames: '[name].bundle',
  chunkNames: 'chunks/[name]-[hash]',
  splitting: true,
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  external,
  plugins: [trimmablePlugin],
  // The CommonJS dependencies (ws) call require(); an ES module has to make its own. Every
  // chunk gets the banner; the name keeps it from clashing with a chunk's own `require`.
  banner: {
    js: "import { createRequire as __execrxCreateRequire } from 'node:module'; const require = __execrxCreateRequire(import.meta.url);",
  },
  logLevel: 'warning',
  metafile: true,
});
// Chunks a load path always loads together become one file (mergeChunks.mjs).
await mergeChunks(metafile, process.cwd(), distReal);

/**
 * In the script, an `import()` of what is not bundled (a Node builtin, an addon) becomes a
 * `require()`: a script compiled by `vm.Script` has no `import()` but through an experimental
 * option (which warns on stderr, and did not survive the code cache).
 */
const requireNotBundledPlugin = {
  name: 'execrx-cli-require-not-bundled',
  setup(pluginBuild) {
    pluginBuild.onResolve({ filter: /./ }, (args) =>
      args.kind === 'dynamic-import' && (isBuiltin(args.path) || external.includes(args.path))
        ? { path: args.path, namespace: 'execrx-require' }
        : undefined,
    );
    pluginBuild.onLoad({ filter: /./, namespace: 'execrx-require' }, (args) => ({
      contents: `module.exports = require(${JSON.stringify(args.path)});`,
      loader: 'js',
    }));
  },
};

// The code cache's script: everything in one file (no `import()` between files in a script),
// `import.meta.url` the script's own URL, whitespace and comments left out (a smaller, ASCII
// text is quicker to read; the cache holds the compiled code). A warning fails the build:
// esbuild warns of `import.meta` beyond its `url`, which a CommonJS script would see empty
// (and differ from the plain path only at run time; a top-level `await` is an error anyway).
const script = await build({
  entryPoints: [join(dist, 'cli/main.js')],
  outfile: join(dist, 'cli/main.cjs'),
  bundle: true,
  platform: 'node',
  format: 'cjs',
  target: 'node20',
  external,
  plugins: [requireNotBundledPlugin, trimmablePlugin],
  define: { 'import.meta.url': '__execrxImportMetaUrl' },
  banner: {
    js: "var __execrxImportMetaUrl = require('node:url').pathToFileURL(__filename).href;",
  },
  minifyWhitespace: true,
  logLevel: 'warning',
  metafile: true,
});
if (script.warnings.length > 0)
  throw new Error('the CLI as one CommonJS script: esbuild warned (above)');
const dynamic = Object.values(script.metafile.outputs)
  .flatMap((output) => output.imports)
  .filter((imported) => imported.kind === 'dynamic-import');
if (dynamic.length > 0)
  throw new Error(`the CLI as one CommonJS script still imports ${dynamic.map((i) => i.path)}`);
