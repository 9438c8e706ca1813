/**
 * `--concurrent-requests`: with a limit of 1 (the binary's default) a `process/read` that
 * waits holds back a later `fs/getMetadata` on the same connection; with 2 it does not.
 * Asserted alike on the binary and on our executor (whose own default is no limit).
 */
import { describe, expect, it } from '@jest/globals';
import { RawClient, startParams } from '../server/rawClient.js';
import { startCodexExecServer, type RunningExecServer } from '../support/codexExecServer.js';
import { startTsExecServer } from '../support/tsExecServer.js';

const WAIT_MS = 1_500;

/** How long after a waiting `process/read` was sent the metadata reply came. */
async function metadataDelay(server: RunningExecServer): Promise<number> {
  const client = await RawClient.connect(server.url);
  try {
    await client.handshake();
    await client.call('process/start', startParams('sleeper', ['/bin/sleep', '5']));
    const started = Date.now();
    const read = client.post('process/read', {
      processId: 'sleeper',
      afterSeq: 0,
      waitMs: WAIT_MS,
    });
    const metadata = await client.request('fs/getMetadata', { path: 'file:///tmp' }, 10_000);
    const delay = Date.now() - started;
    expect(metadata.result).toBeDefined();
    await client.response(read, 10_000);
    await client.call('process/terminate', { processId: 'sleeper' });
    return delay;
  } finally {
    await client.close();
    await server.stop();
  }
}

describe('--concurrent-requests', () => {
  it('codex exec-server: 1 by default serializes; 2 lets the metadata overtake', async () => {
    expect(await metadataDelay(await startCodexExecServer())).toBeGreaterThanOrEqual(WAIT_MS - 50);
    expect(
      await metadataDelay(await startCodexExecServer({ args: ['--concurrent-requests', '2'] })),
    ).toBeLessThan(WAIT_MS - 500);
  });

  it('TypeScript executor: a limit of 1 serializes; 2 lets the metadata overtake', async () => {
    expect(
      await metadataDelay(await startTsExecServer({ concurrentRequests: 1 })),
    ).toBeGreaterThanOrEqual(WAIT_MS - 50);
    expect(await metadataDelay(await startTsExecServer({ concurrentRequests: 2 }))).toBeLessThan(
      WAIT_MS - 500,
    );
  });
});
