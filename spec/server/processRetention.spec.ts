/**
 * No output lost in an outage (issue #14, item 6): while a session is detached, a process
 * whose retained output is full is no longer read (the child blocks on write) instead of its
 * oldest output being dropped, so a client that resumes gets every byte once and in order.
 * A child writes ~8 MB/s of deterministic blocks through `execrx`'s executor, behind a proxy
 * that cuts the connection and refuses new ones for 1–2 s, three times; the client (the
 * environment layer over plain WebSocket) recovers each time. Before, every outage longer
 * than ~0.13 s ended in `process events are no longer retained`.
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import { createCipheriv, createHash } from 'node:crypto';
import { firstValueFrom } from 'rxjs';
import { LazyRemoteExecServerClient, webSocketUrl } from '../../src/environment/index.js';
import { assertBuilt, killRunningClis, startCli } from '../cli/support/runCli.js';
import { startDroppingProxy, type DroppingProxy } from '../support/droppingProxy.js';

const BLOCK_BYTES = 64 * 1024;
const BLOCKS = 384; // 24 MiB
const BLOCK_INTERVAL_MS = 8; // ~8 MB/s
const OUTAGES_MS = [1_000, 2_000, 1_500];

function block(index: number): Buffer {
  const key = createHash('sha256').update(String(index)).digest();
  return createCipheriv('aes-256-ctr', key, Buffer.alloc(16)).update(Buffer.alloc(BLOCK_BYTES));
}

/** The child: block i every BLOCK_INTERVAL_MS (stdout is a pipe: writes block when it is full). */
const PRODUCER = `
const crypto = require('node:crypto');
const size = ${BLOCK_BYTES};
let index = 0;
const next = () => {
  if (index === ${BLOCKS}) return;
  const key = crypto.createHash('sha256').update(String(index)).digest();
  process.stdout.write(crypto.createCipheriv('aes-256-ctr', key, Buffer.alloc(16)).update(Buffer.alloc(size)));
  index += 1;
  setTimeout(next, ${BLOCK_INTERVAL_MS});
};
next();
`;

let proxy: DroppingProxy | undefined;
let client: LazyRemoteExecServerClient | undefined;
afterEach(async () => {
  client?.close();
  await proxy?.close();
  await killRunningClis();
});

describe('process output across outages', () => {
  it('arrives exactly once and in order through three 1-2 s outages at ~8 MB/s', async () => {
    // The executor in its own process (`execrx serve`), as in use.
    assertBuilt();
    const serve = startCli(['serve', '--no-warm-up'], { timeoutMs: 120_000 });
    const [url] = (await serve.stdoutLines(1)) as [string];
    proxy = await startDroppingProxy(url);
    client = new LazyRemoteExecServerClient(webSocketUrl(proxy.url));
    const session = await firstValueFrom(client.get());
    const producer = await firstValueFrom(
      session.startProcess({ argv: [process.execPath, '-e', PRODUCER], cwd: '/tmp' }),
    );
    const expected = createHash('sha256');
    for (let index = 0; index < BLOCKS; index += 1) expected.update(block(index));
    const received = createHash('sha256');
    let bytes = 0;
    let outages = 0;
    const total = BLOCK_BYTES * BLOCKS;
    await new Promise<void>((resolve, reject) => {
      producer.stdout$.subscribe({
        next: (chunk) => {
          received.update(chunk);
          bytes += chunk.length;
          const cut = OUTAGES_MS[outages];
          if (cut !== undefined && bytes >= ((outages + 1) * total) / (OUTAGES_MS.length + 1)) {
            outages += 1;
            proxy?.cutFor(cut);
          }
          if (bytes >= total) resolve();
        },
        error: (error: Error) =>
          reject(new Error(`${error.message} after ${bytes} bytes, ${outages} outages`)),
        complete: () => (bytes >= total ? resolve() : reject(new Error(`ended at ${bytes}`))),
      });
    });
    expect(bytes).toBe(total);
    expect(received.digest('hex')).toBe(expected.digest('hex'));
    expect(outages).toBe(OUTAGES_MS.length);
    expect(proxy.connections).toBeGreaterThan(OUTAGES_MS.length);
  }, 120_000);
});
