/**
 * Chaos soak (issue 14 item 5): the chaos-without-loss scenario of
 * spec/environment/chaosWithoutLoss.spec.ts at full size, on the plain WebSocket path and the
 * Noise path through our rendezvous, one seed after another. Each run verifies the sha256 of a
 * CHAOS_MIB (default 64) MiB output stream driven by stdin writes, plus byte-exact file round
 * trips interleaved with it, and prints the faults it survived and the bytes it verified.
 * A failing seed is printed; `CHAOS_SEEDS=<seed>` replays it.
 *
 * Run: `npx tsx bench/chaos-soak.ts` (CHAOS_MIB=64, CHAOS_RUNS=3, CHAOS_PATHS=plain,noise,
 * CHAOS_SEEDS=1,2,3 to pick seeds).
 *
 * `CHAOS_CUT_KIB=256,1536` cuts connections more often than a recovery replay can pass (see
 * CUT_AFTER_BYTES in spec/support/chaosScenario.ts): it shows recovery making no progress.
 *
 * Outages (issue 14 item 6): `CHAOS_OUTAGE_MS=2000 CHAOS_AHEAD=32` refuses connections for up to
 * 2 s after each cut while up to 32 blocks (8 MiB) of output may be unread, far more than the
 * 1 MiB a detached process's output is retained: this passes only once the executor stops
 * reading a process whose retained output is full instead of discarding the oldest.
 */
import { defaultFaults, runChaosScenario, type ChaosPath } from '../spec/support/chaosScenario.js';

const mib = Number(process.env.CHAOS_MIB ?? 64);
const runs = Number(process.env.CHAOS_RUNS ?? 3);
const paths = (process.env.CHAOS_PATHS ?? 'plain,noise').split(',') as ChaosPath[];
const outageMs = Number(process.env.CHAOS_OUTAGE_MS ?? 0);
/** `min,max` KiB between cuts, instead of the scenario's default. */
const cutKib = process.env.CHAOS_CUT_KIB?.split(',').map((kib) => Number(kib) * 1024);
const aheadBlocks = Number(process.env.CHAOS_AHEAD ?? 2);
const seeds = process.env.CHAOS_SEEDS
  ? process.env.CHAOS_SEEDS.split(',').map(Number)
  : Array.from({ length: runs }, (_, index) => 1000 + index);

let failed = 0;
for (const seed of seeds) {
  for (const path of paths) {
    const started = performance.now();
    try {
      const result = await runChaosScenario({
        path,
        seed,
        bytes: mib * 1024 * 1024,
        faults: {
          ...defaultFaults(path),
          outageMs,
          ...(cutKib ? { cutAfterBytes: [cutKib[0]!, cutKib[1]!] as const } : {}),
        },
        aheadBlocks,
        timeoutMs: 60_000 + mib * 10_000,
      });
      const { chaos } = result;
      const seconds = (performance.now() - started) / 1000;
      console.log(
        `${path.padEnd(5)} seed ${seed}: ${(result.bytesVerified / 2 ** 20).toFixed(0)} MiB verified ` +
          `(sha256), ${result.writes} stdin writes once each, ${result.fileRoundTrips} file round trips exact; ` +
          `survived ${chaos.cuts} cuts, ${chaos.dropped} drops, ${chaos.duplicated} duplicates, ` +
          `${chaos.reordered} reorders, ${chaos.delayed} delays over ${chaos.connections} connections ` +
          `(${chaos.frames} frames); ${result.retriedRequests} requests retried; ` +
          `same session: ${result.sessionKept}; ${seconds.toFixed(1)} s`,
      );
    } catch (error) {
      failed += 1;
      console.log(
        `${path.padEnd(5)} seed ${seed}: FAILED: ${error instanceof Error ? error.message : String(error)}`,
      );
    }
  }
}
console.log(failed === 0 ? 'chaos soak: no loss' : `chaos soak: ${failed} run(s) failed`);
process.exit(failed === 0 ? 0 : 1);
