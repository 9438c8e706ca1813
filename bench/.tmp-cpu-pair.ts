// Throwaway (not committed): executor CPU per 256 MiB of stdin, fast vs plain twin, interleaved.
import { spawn, execSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { packageBin } from './support/executors.js';
const N = 256 * 1024 * 1024;
const ROUNDS = Number(process.env.ROUNDS ?? 6);
const module = process.env.TWIN ?? 'server/fastpath/processWriteFrame';
const cli = await packageBin();
async function serve(bin: string) {
  const child = spawn(process.execPath, [bin, 'serve', '--listen', 'ws://127.0.0.1:0'], { stdio: ['ignore', 'pipe', 'inherit'] });
  const url = await new Promise<string>((resolve) => { let o = ''; child.stdout.setEncoding('utf8'); child.stdout.on('data', (t: string) => { o += t; if (o.includes('\n')) resolve(o.trim().split('\n')[0]!); }); });
  return { url, pid: child.pid!, child };
}
const ticks = (pid: number) => { const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' '); return Number(f[11]) + Number(f[12]); };
function feed(url: string) { const t0 = performance.now(); execSync(`head -c ${N} /dev/zero | ${process.execPath} ${cli} run --url ${url} -- sh -c 'head -c ${N} >/dev/null'`); return N / 1e6 / ((performance.now() - t0) / 1000); }
const sides = [ { label: 'fast', s: await serve(await packageBin()), cpu: [] as number[], mbs: [] as number[] }, { label: 'plain', s: await serve(await packageBin([module])), cpu: [] as number[], mbs: [] as number[] } ];
for (const side of sides) feed(side.s.url);
for (let r = 0; r < ROUNDS; r++) for (const side of r % 2 ? [...sides].reverse() : sides) { const a = ticks(side.s.pid); const m = feed(side.s.url); side.cpu.push((ticks(side.s.pid) - a) * 10); side.mbs.push(m); }
const med = (x: number[]) => { const s = [...x].sort((a, b) => a - b); return (s[(s.length - 1) >> 1]! + s[s.length >> 1]!) / 2; };
for (const side of sides) console.log(side.label, 'executor CPU ms', side.cpu.join(' '), 'median', med(side.cpu), 'MB/s median', med(side.mbs).toFixed(1));
console.log('plain/fast CPU', (med(sides[1]!.cpu) / med(sides[0]!.cpu)).toFixed(3), 'load', readFileSync('/proc/loadavg', 'utf8').trim());
for (const side of sides) side.s.child.kill();
