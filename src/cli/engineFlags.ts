/**
 * V8 flags the `execrx` entry sets for itself before the CLI modules load (`bin/execrx.js`).
 *
 * `execrx serve` is a long-lived executor whose requests come one at a time with idle gaps
 * between them, so its request path runs too rarely for V8 to optimise it: without help each
 * request executes in the Ignition interpreter. `--always-sparkplug` compiles every function
 * to baseline machine code on first call (cheap, no optimisation), which cut a cold
 * `fs/getMetadata` round trip by ~15% (bench/remote-latency.ts). It only affects functions
 * compiled after it is set, hence before the executor's modules are imported.
 *
 * Tried and left out: `--interrupt-budget=1024 --ticks-before-optimization=1` (optimise after
 * ~1 KiB of bytecode has run) made a warmed-up executor's cold `fs/getMetadata` ~10% faster
 * still, but its burst of optimising compiles while the first connections come in took a
 * core of a 2-core host: connection_ms rose to 1.5-2.3x the binary's, and the binary's own
 * latencies on the same host rose with it.
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
