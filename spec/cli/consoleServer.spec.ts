/**
 * The console server's relay to a transport it opened (what `--environment` uses for stdio and
 * `local`), in process: a transport cannot be paused, so a page that stops reading is
 * disconnected once more than `maxUnsentToPageBytes` wait for it, and its transport is closed.
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import { fileURLToPath } from 'node:url';
import { of, firstValueFrom } from 'rxjs';
import WebSocket from 'ws';
import { startConsoleServer, type ConsoleServer } from '../../src/cli/consoleServer.js';
import { createMemoryTransportPair } from '../../src/transport/memoryTransport.js';
import type { Transport } from '../../src/transport/transport.js';

const ASSETS_DIR = fileURLToPath(new URL('../../dist/console', import.meta.url));
const LIMIT_BYTES = 1024 * 1024;

let server: ConsoleServer | undefined;
afterEach(async () => server?.close());

describe('console relay to a transport', () => {
  it('disconnects a page that leaves more than the limit unread (1011) and closes its transport', async () => {
    let executorSide: Transport | undefined;
    server = await startConsoleServer({
      target: {
        kind: 'transport',
        label: 'memory',
        open: () => {
          const [consoleSide, other] = createMemoryTransportPair();
          executorSide = other;
          return of(consoleSide);
        },
      },
      port: 0,
      assetsDir: ASSETS_DIR,
      maxUnsentToPageBytes: LIMIT_BYTES,
    });
    const url = new URL(server.url);
    const page = new WebSocket(`ws://${url.host}/executor?token=${url.searchParams.get('token')}`, {
      origin: url.origin,
    });
    await new Promise((resolve, reject) => page.once('open', resolve).once('error', reject));
    const closed = new Promise<number>((resolve) => page.once('close', (code) => resolve(code)));
    const executor = executorSide as Transport;
    const executorEnded = firstValueFrom(executor.incoming$, { defaultValue: 'completed' });
    // The page reads nothing from here on; the executor side keeps writing 256 KiB messages.
    page.pause();
    const message = JSON.stringify({ method: 'spam', params: 'x'.repeat(256 * 1024) });
    let sent = 0;
    let transportClosed = false;
    void executorEnded.then(() => (transportClosed = true));
    for (; sent < 2000 && !transportClosed; sent++) {
      executor.send(message);
      if (sent % 4 === 3) await new Promise((resolve) => setTimeout(resolve, 5));
    }
    expect(await executorEnded).toBe('completed');
    page.resume();
    expect(await closed).toBe(1011);
    // Cut long before 2000 messages (500 MiB): bounded by the limit plus the socket buffers.
    expect(sent).toBeLessThan(2000);
  }, 60_000);
});
