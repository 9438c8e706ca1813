/**
 * Throughput of relay message framing + reassembly (noise-relay.md §5.2): one 64 MiB JSON-RPC
 * message framed, cut into 61440-byte records and reassembled, plus many small messages.
 * Crypto is excluded (see the noise benchmarks). Run: `npx tsx bench/relay-framing.ts`.
 */
import { performance } from 'node:perf_hooks';
import {
  MAX_NOISE_JSONRPC_MESSAGE_LEN,
  MessageReassembler,
  NOISE_RECORD_PLAINTEXT_LEN,
  messageToRecords,
} from '../src/relay/messageFraming.js';

function measure(label: string, bytesPerRun: number, runs: number, run: () => number): void {
  run(); // warm-up
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const start = performance.now();
    const checked = run();
    times.push(performance.now() - start);
    if (checked !== bytesPerRun) throw new Error(`${label}: reassembled ${checked} bytes`);
  }
  times.sort((a, b) => a - b);
  const median = times[Math.floor(times.length / 2)]!;
  const mbPerSecond = bytesPerRun / (1024 * 1024) / (median / 1000);
  console.log(
    `${label.padEnd(44)} median ${median.toFixed(1).padStart(7)} ms  ${mbPerSecond.toFixed(0).padStart(6)} MiB/s`,
  );
}

const big = new Uint8Array(MAX_NOISE_JSONRPC_MESSAGE_LEN).fill(0x61);
measure('64 MiB message, frame + split + reassemble', big.length, 7, () => {
  const records = messageToRecords(big);
  if (records.some((r) => r.length > NOISE_RECORD_PLAINTEXT_LEN)) throw new Error('record too big');
  const reassembler = new MessageReassembler();
  let total = 0;
  for (const record of records)
    for (const message of reassembler.push(record)) total += message.length;
  return total;
});

const records = messageToRecords(big);
measure(`64 MiB reassemble only (${records.length} records)`, big.length, 7, () => {
  const reassembler = new MessageReassembler();
  let total = 0;
  for (const record of records)
    for (const message of reassembler.push(record)) total += message.length;
  return total;
});

const small = new TextEncoder().encode(
  JSON.stringify({ id: 1, result: { exitCode: 0, stdout: 'ok' } }),
);
const count = 100_000;
measure(`${count} x ${small.length} B messages`, count * small.length, 7, () => {
  const reassembler = new MessageReassembler();
  let total = 0;
  for (let i = 0; i < count; i++) {
    for (const record of messageToRecords(small)) {
      for (const message of reassembler.push(record)) total += message.length;
    }
  }
  return total;
});
