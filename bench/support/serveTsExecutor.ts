/**
 * `execrx` from source, for `EXECRX_BENCH_FROM_SOURCE=1`: what `bin/execrx.js` does, with
 * `src/cli` in place of the compiled `dist/cli`.
 * `node --import tsx bench/support/serveTsExecutor.ts serve --listen ws://127.0.0.1:0`
 */
const argv = process.argv.slice(2);
const { main } = await import('../../src/cli/main.js');
process.exit(await main(argv));
