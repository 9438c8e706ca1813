import { decodeRelayFrame, encodeRelayFrame, dataFrame } from '../src/relay/index.js';
const payload = new Uint8Array(61456).fill(7);
const N = 4369 * 4;
const frames = Array.from({ length: 64 }, (_, i) => Buffer.from(encodeRelayFrame(dataFrame('0b8f4f2e-8d53-4f0e-9a51-6d0f3c1f2a77', i + 1000, payload))));
function bench(name: string, fn: (i: number) => unknown) {
  for (let i = 0; i < 2000; i++) fn(i);
  const t = process.cpuUsage();
  for (let i = 0; i < N; i++) fn(i);
  const c = process.cpuUsage(t);
  console.log(name.padEnd(28), ((c.user + c.system) / 1000 / 4).toFixed(1), 'ms CPU per 256 MiB');
}
for (let k = 0; k < 2; k++) {
  bench('decode plain (Buffer)', (i) => decodeRelayFrame(frames[i & 63]!));
}
