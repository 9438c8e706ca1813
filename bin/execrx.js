#!/usr/bin/env node
const argv = process.argv.slice(2);
// The bundled CLI (scripts/bundle-cli.mjs), started from a V8 code cache when it can be
// (dist/cli/fastpath/codeCache.js).
const { runCli } = await import('../dist/cli/fastpath/codeCache.js');

runCli(argv).then(
  (code) => process.exit(code),
  (error) => {
    process.stderr.write(`execrx: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  },
);
