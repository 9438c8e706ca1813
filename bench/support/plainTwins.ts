/**
 * Plain twins: the side-by-side half of the fast-path rule (DEVELOPERS.md).
 *
 * A hand-written fast path lives in `src/<layer>/fastpath/<name>.ts`; its plain twin — the same
 * exports, written the obvious way — lives at `bench/plain/<layer>/fastpath/<name>.ts`. A spec
 * (`spec/<layer>/fastpath/<name>.spec.ts`) holds the fast module to its twin. This module swaps
 * twins into a compiled copy of `src/`, so that a benchmark can run the fast build and the plain
 * build in one run and print the ratio the trick earns.
 *
 * A variant is a list of module paths relative to `src/`, without extension, e.g.
 * `['server/fastpath/notificationText']`. Each twin is bundled by esbuild (npm packages stay
 * external) and written over the compiled `<srcOut>/<module>.js`, so every importer of the fast
 * module gets the twin. A twin's imports of `src/` stay imports of the compiled modules beside
 * it (not bundled copies), so classes such as the error hierarchy keep one identity.
 */
import { existsSync } from 'node:fs';
import { dirname, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build, type Plugin } from 'esbuild';

const REPO = fileURLToPath(new URL('../../', import.meta.url));

/** Module paths relative to `src/` whose plain twins replace them; empty is the shipped build. */
export type PlainVariant = readonly string[];

/** A short label for a variant, for output and directory names: `fast` or `plain-<names>`. */
export function variantLabel(variant: PlainVariant): string {
  if (variant.length === 0) return 'fast';
  return `plain-${variant.map((module) => module.split('/').pop()).join('+')}`;
}

/** Parses `EXECRX_BENCH_PLAIN=a/fastpath/x,b/fastpath/y` (unset or empty: no twins). */
export function plainVariantFromEnv(value = process.env.EXECRX_BENCH_PLAIN): PlainVariant {
  return (value ?? '')
    .split(',')
    .map((module) => module.trim())
    .filter(Boolean);
}

/**
 * Writes each twin of `variant` over its compiled module under `srcOut` (the directory `tsc`
 * emitted `src/` into). Throws when a twin or its compiled original is missing, so a typo can
 * never silently benchmark the fast build against itself.
 */
export async function overlayPlainTwins(srcOut: string, variant: PlainVariant): Promise<void> {
  for (const module of variant) {
    const twin = `${REPO}bench/plain/${module}.ts`;
    const compiled = `${srcOut}/${module}.js`;
    if (!existsSync(twin)) throw new Error(`no plain twin at ${twin}`);
    if (!existsSync(compiled)) throw new Error(`no compiled fast module at ${compiled}`);
    await build({
      entryPoints: [twin],
      plugins: [compiledSourceImports(srcOut, dirname(compiled))],
      outfile: compiled,
      allowOverwrite: true,
      bundle: true,
      packages: 'external',
      platform: 'node',
      format: 'esm',
      target: 'node20',
      logLevel: 'warning',
    });
  }
}

/** Resolves a twin's relative imports of `src/…` to the compiled module under `srcOut`, external. */
function compiledSourceImports(srcOut: string, compiledDir: string): Plugin {
  const sourceRoot = `${REPO}src/`;
  return {
    name: 'compiled-source-imports',
    setup(builder) {
      builder.onResolve({ filter: /^\./ }, (args) => {
        const target = resolve(args.resolveDir, args.path);
        if (!target.startsWith(sourceRoot)) return undefined;
        const path = relative(compiledDir, `${srcOut}/${target.slice(sourceRoot.length)}`);
        return { path: path.startsWith('.') ? path : `./${path}`, external: true };
      });
    },
  };
}
