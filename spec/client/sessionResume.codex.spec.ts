/**
 * Paged recovery against the real `codex exec-server` 0.169.0: output a process wrote while
 * the transport was down (~600 KB) is caught up in `process/read` pages of at most 128 KiB
 * (src/client/sessionResume.ts), and every byte arrives once, in order.
 */
import { expect, it } from '@jest/globals';
import { lastValueFrom, timeout, toArray } from 'rxjs';
import { ExecServerClient } from '../../src/client/index.js';
import { ServerError } from '../../src/protocol/errors.js';
import { connectWebSocket } from '../../src/transport/webSocketTransport.js';
import type { Transport } from '../../src/transport/transport.js';
import { codexWorkspace, within } from '../support/codexWorkspace.js';

const workspace = codexWorkspace('execrx-resume-');

/** A transport that records the `process/read` requests it sends. */
function recording(transport: Transport, reads: unknown[]): Transport {
  return {
    incoming$: transport.incoming$,
    close: () => transport.close(),
    send: (message) => {
      const parsed = JSON.parse(message) as { method?: string; params?: unknown };
      if (parsed.method === 'process/read') reads.push(parsed.params);
      transport.send(message);
    },
  };
}

it('catches up ~600 KB missed during a loss in pages of at most 128 KiB', async () => {
  const first = await within(connectWebSocket(workspace.server.url));
  const client = await within(
    ExecServerClient.connect(first, { clientName: 'execrx-spec', recovery: true }),
  );
  workspace.clients.push(client);
  // 600 000 bytes of 'x' in 6 000-byte writes, after the transport is gone.
  const script =
    'sleep 1; i=0; while [ $i -lt 100 ]; do head -c 6000 /dev/zero | tr "\\0" x; i=$((i+1)); done';
  const handle = await within(
    client.startProcess({
      argv: ['sh', '-c', script],
      cwd: workspace.workDir,
      env: { PATH: '/usr/bin:/bin' },
    }),
  );
  const output = lastValueFrom(handle.stdout$.pipe(toArray(), timeout(30_000)));
  first.close();
  await new Promise((resolve) => setTimeout(resolve, 2500));
  const reads: unknown[] = [];
  for (let attempt = 0; attempt < 50; attempt++) {
    const next = recording(await within(connectWebSocket(workspace.server.url)), reads);
    const resumed = await within(client.resume(next)).then(
      () => true,
      (error: unknown) => {
        if (error instanceof ServerError && error.code === -32010) return false;
        throw error;
      },
    );
    if (resumed) break;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const bytes = Buffer.concat(await output);
  expect(bytes.length).toBe(600_000);
  expect(bytes.every((byte) => byte === 0x78)).toBe(true);
  expect(reads.length).toBeGreaterThan(4);
  for (const read of reads) expect(read).toMatchObject({ maxBytes: 128 * 1024, waitMs: 0 });
}, 60_000);
