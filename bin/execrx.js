#!/usr/bin/env node
const argv = process.argv.slice(2);
// The CLI in one file (scripts/bundle-cli.mjs): much quicker to load than its modules.
const { main } = await import('../dist/cli/main.bundle.js');

main(argv).then(
  (code) => process.exit(code),
  (error) => {
    process.stderr.write(`execrx: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  },
);
