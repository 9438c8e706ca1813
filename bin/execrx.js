#!/usr/bin/env node
import { main } from '../dist/cli/main.js';

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error) => {
    process.stderr.write(`execrx: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  },
);
