/**
 * Builds what runs in browsers, with esbuild, from the TypeScript sources:
 * - `dist/browser/execrx.js` (+ `.min.js`): `src/browser.ts` and everything it imports (rxjs,
 *   zod, @noble/*, protobuf) as one self-contained ES module: the `execrx/browser` entry;
 * - `dist/console/`: the `execrx console` page (`src/console/page/`), its script with the
 *   client and @xterm/xterm bundled in, and xterm's stylesheet.
 * In both, `src/platform/selected.ts` (the Node platform) is resolved to `selectedBrowser.ts`:
 * this is where the platform seam is chosen for browsers. Anything reaching `node:` modules or
 * `ws` fails the build (platform 'browser' cannot resolve them).
 *
 * Usage: `node scripts/bundle-browser.mjs [packageDir]`; `bundleBrowser(options)` for the bench.
 */
import { build } from 'esbuild';
import { copyFile, mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The esbuild plugin that swaps the platform. */
export const browserPlatformPlugin = {
  name: 'execrx-browser-platform',
  setup(pluginBuild) {
    pluginBuild.onResolve({ filter: /[/\\]selected(Crypto)?\.js$/ }, (args) => {
      if (!/[/\\]src[/\\]platform$/.test(args.resolveDir)) return undefined;
      const browserFile = args.path.includes('selectedCrypto')
        ? 'selectedCryptoBrowser.ts'
        : 'selectedBrowser.ts';
      return { path: join(args.resolveDir, browserFile) };
    });
    // Guard: nothing browser-bound may pull in ws (its browser stub throws at run time).
    pluginBuild.onResolve({ filter: /^ws$/ }, (args) => ({
      errors: [{ text: `ws imported by ${args.importer}: use the platform seam (src/platform/)` }],
    }));
  },
};

/** esbuild options shared by the library bundle, the console page and the benchmark. */
export function browserBuildOptions(entryPoint, outfile, extra = {}) {
  return {
    entryPoints: [entryPoint],
    outfile,
    bundle: true,
    platform: 'browser',
    format: 'esm',
    target: 'es2022',
    plugins: [browserPlatformPlugin],
    logLevel: 'warning',
    legalComments: 'none',
    ...extra,
  };
}

async function main() {
  const packageDir = process.argv[2] ?? fileURLToPath(new URL('..', import.meta.url));
  const src = join(packageDir, 'src');
  const dist = join(packageDir, 'dist');
  await build(browserBuildOptions(join(src, 'browser.ts'), join(dist, 'browser/execrx.js')));
  await build(
    browserBuildOptions(join(src, 'browser.ts'), join(dist, 'browser/execrx.min.js'), {
      minify: true,
    }),
  );
  const page = join(dist, 'console');
  await build(
    browserBuildOptions(join(src, 'console/page/main.ts'), join(page, 'console.js'), {
      minify: true,
    }),
  );
  await mkdir(page, { recursive: true });
  const xtermCss = join(packageDir, 'node_modules/@xterm/xterm/css/xterm.css');
  await copyFile(xtermCss, join(page, 'xterm.css'));
  for (const file of ['index.html', 'console.css']) {
    await copyFile(join(src, 'console/page', file), join(page, file));
  }
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  await main();
}
