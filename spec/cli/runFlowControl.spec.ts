/**
 * `execrx run` into a reader slower than the executor, over a plain WebSocket (`--url`) and
 * over Noise (the embedded executor): the CLI stops reading from the executor while its stdout
 * is full (runProcess.ts `outputFlow`), so its memory stays bounded whatever the output's
 * size, and every byte still arrives once the reader reads.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { startTsExecServer } from '../support/tsExecServer.js';
import type { RunningExecServer } from '../support/codexExecServer.js';
import { assertBuilt, BIN } from './support/runCli.js';

const OUTPUT_BYTES = 256 * 1024 * 1024;
/**
 * Resident memory the CLI may reach while its reader is stalled: Node and the bundle take
 * ~60–90 MB here (the embedded executor's output bound adds up to ~10 MB); without flow
 * control the 256 MiB of output would pile up on top (~400 MB measured).
 */
const RSS_LIMIT_BYTES = 180 * 1024 * 1024;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function residentBytes(pid: number): number {
  const match = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  if (!match) throw new Error(`no VmRSS for pid ${pid}`);
  return Number(match[1]) * 1024;
}

let server: RunningExecServer;
beforeAll(async () => {
  assertBuilt();
  server = await startTsExecServer();
});
afterAll(async () => {
  await server?.stop();
});

describe.each([
  ['--url (plain WebSocket)', () => ['--url', server.url]],
  ['the embedded executor (Noise)', () => []],
])('execrx run into a stalled reader, %s', (_name, target) => {
  it('keeps its memory bounded while the reader is stalled, then delivers every byte', async () => {
    const child = spawn(
      process.execPath,
      [BIN, 'run', ...target(), '--', 'head', '-c', String(OUTPUT_BYTES), '/dev/zero'],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    const killer = setTimeout(() => child.kill('SIGKILL'), 90_000);
    try {
      let stderr = '';
      child.stderr!.setEncoding('utf8').on('data', (text: string) => (stderr += text));
      const exited = new Promise<number | null>((resolve) => child.once('close', resolve));
      const stdout = child.stdout!;
      stdout.pause(); // the stalled reader: nothing is read from the pipe
      let peak = 0;
      for (let sample = 0; sample < 30; sample++) {
        await sleep(100);
        peak = Math.max(peak, residentBytes(child.pid!));
      }
      expect(peak).toBeLessThan(RSS_LIMIT_BYTES);

      let received = 0;
      stdout.on('data', (chunk: Buffer) => (received += chunk.length));
      stdout.resume();
      expect(await exited).toBe(0);
      expect(stderr).toBe('');
      expect(received).toBe(OUTPUT_BYTES);
    } finally {
      clearTimeout(killer);
      child.kill('SIGKILL');
    }
  }, 120_000);
});
