/**
 * `pauseReading()` / `resumeReading()`: flow control for a consumer slower than the executor.
 * While paused no more output reaches the client; once resumed every byte arrives, in order,
 * against both executors (each holds its writes back instead of dropping them). A session
 * resumed while paused reads its new transport's handshake, then stays paused.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { firstValueFrom, lastValueFrom, timeout } from 'rxjs';
import { ExecServerClient } from '../../src/client/index.js';
import { ServerError } from '../../src/protocol/errors.js';
import { connectWebSocket } from '../../src/transport/webSocketTransport.js';
import { startCodexExecServer, type RunningExecServer } from '../support/codexExecServer.js';
import { startTsExecServer } from '../support/tsExecServer.js';

const OUTPUT_BYTES = 32 * 1024 * 1024;
/** What may still arrive after `pauseReading()`: messages `ws` had read before it paused. */
const READ_AHEAD_LIMIT = 1024 * 1024;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe.each([
  ['the TypeScript executor', startTsExecServer],
  ['codex exec-server 0.169.0', startCodexExecServer],
])('reading paused, against %s', (_name, start) => {
  let server: RunningExecServer;
  beforeAll(async () => {
    server = await start();
  });
  afterAll(async () => {
    await server?.stop();
  });

  it('receives nothing more while paused, then every byte after resumeReading()', async () => {
    const transport = await firstValueFrom(connectWebSocket(server.url).pipe(timeout(10_000)));
    const client = await firstValueFrom(
      ExecServerClient.connect(transport, { clientName: 'execrx-spec' }).pipe(timeout(10_000)),
    );
    try {
      client.pauseReading();
      const started = client.startProcess({
        argv: ['head', '-c', String(OUTPUT_BYTES), '/dev/zero'],
        cwd: '/',
        env: { PATH: '/usr/bin:/bin' },
      });
      // The `process/start` answer waits too: nothing is read while paused.
      let handleArrived = false;
      const handlePromise = firstValueFrom(started).then((handle) => {
        handleArrived = true;
        return handle;
      });
      await sleep(500);
      expect(handleArrived).toBe(false);

      client.resumeReading();
      const handle = await handlePromise;
      let received = 0;
      let nonZero = false;
      const done = lastValueFrom(handle.stdout$.pipe(timeout(30_000)), { defaultValue: null });
      handle.stdout$.subscribe((chunk) => {
        received += chunk.length;
        if (chunk.some((byte) => byte !== 0)) nonZero = true;
      });
      while (received === 0) await sleep(5);

      client.pauseReading();
      await sleep(100); // what `ws` had read before the pause drains
      const atPause = received;
      await sleep(700);
      expect(received - atPause).toBe(0);
      expect(atPause).toBeLessThan(OUTPUT_BYTES - READ_AHEAD_LIMIT);

      client.resumeReading();
      await done;
      expect(await firstValueFrom(handle.exit$.pipe(timeout(10_000)))).toBe(0);
      expect(received).toBe(OUTPUT_BYTES);
      expect(nonZero).toBe(false);
    } finally {
      client.close();
    }
  }, 60_000);

  it('resumes while paused: the new transport reads its handshake, then stays paused', async () => {
    const connect = () => firstValueFrom(connectWebSocket(server.url).pipe(timeout(10_000)));
    const first = await connect();
    const client = await firstValueFrom(
      ExecServerClient.connect(first, { clientName: 'execrx-spec', recovery: true }).pipe(
        timeout(10_000),
      ),
    );
    try {
      const bytes = 4 * 1024 * 1024;
      // Produces its output once told to, so that none is replayed during the resume.
      const handle = await firstValueFrom(
        client
          .startProcess({
            argv: ['sh', '-c', `read go; head -c ${bytes} /dev/zero`],
            cwd: '/',
            env: { PATH: '/usr/bin:/bin' },
            pipeStdin: true,
          })
          .pipe(timeout(10_000)),
      );
      let received = 0;
      const done = lastValueFrom(handle.stdout$.pipe(timeout(30_000)), { defaultValue: null });
      handle.stdout$.subscribe((chunk) => (received += chunk.length));

      client.pauseReading();
      first.close();
      // The binary detaches the old connection's session a moment later (-32010 until then).
      for (let attempt = 0; ; attempt++) {
        const resumed = await firstValueFrom(client.resume(await connect()).pipe(timeout(5_000)))
          .then(() => true)
          .catch((error: unknown) => {
            if (attempt < 50 && error instanceof ServerError && error.code === -32010) return false;
            throw error;
          });
        if (resumed) break;
        await sleep(100);
      }
      expect(client.state).toBe('connected');
      handle.write(Buffer.from('go\n')).subscribe({ error: () => undefined });
      await sleep(1_500); // the output is produced now, and not read
      expect(received).toBe(0);

      client.resumeReading();
      await done;
      expect(received).toBe(bytes);
    } finally {
      client.close();
    }
  }, 60_000);
});
