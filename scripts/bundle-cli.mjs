/**
 * Bundles the CLI — `dist/cli/main.js` and all it imports, rxjs and ws included — into one
 * file, `dist/cli/main.bundle.js`, which `bin/execrx.js` loads. Node 20 took ~0.4 s to find
 * and compile those ~600 files one by one, nearly half of an `execrx run`; from one file it
 * takes a fraction. The library's entry points (`exports`) stay unbundled.
 *
 * Usage: `node scripts/bundle-cli.mjs [packageDir]` (default: this package), after `tsc`.
 */
import { build } from 'esbuild';
import { fileURLToPath } from 'node:url';

const packageDir = process.argv[2] ?? fileURLToPath(new URL('..', import.meta.url));

await build({
  entryPoints: [`${packageDir}/dist/cli/main.js`],
  outfile: `${packageDir}/dist/cli/main.bundle.js`,
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  // A native addon: loaded from node_modules at run time.
  external: ['@lydell/node-pty'],
  // The CommonJS dependencies (ws, rxjs) call require(); an ES module has to make its own.
  banner: {
    js: "import { createRequire } from 'node:module'; const require = createRequire(import.meta.url);",
  },
  logLevel: 'warning',
});
