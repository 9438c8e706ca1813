/**
 * V8 flags the `execrx` entry sets for itself before the CLI modules load (`bin/execrx.js`).
 *
 * Only `serve` gets flags (`--always-sparkplug`: baseline code for every function on first
 * call, for an executor whose requests come too rarely for V8 to optimise them). A flag only
 * affects functions compiled after it is set, hence before the command's modules are imported.
 * spec/cli/engineFlags.spec.ts pins which commands get which flags; the figures, and the flags
 * tried and left out, are in docs/performance.md.
 */
import { setFlagsFromString } from 'node:v8';

/** The flags for a command line (`argv` without node and the script). */
export function engineFlagsFor(argv: readonly string[]): readonly string[] {
  return argv[0] === 'serve' ? ['--always-sparkplug'] : [];
}

/** Sets `engineFlagsFor(argv)`; call before importing the command's modules. */
export function applyEngineFlags(argv: readonly string[]): void {
  for (const flag of engineFlagsFor(argv)) setFlagsFromString(flag);
}
