import { afterEach, describe, expect, it } from '@jest/globals';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { firstValueFrom, lastValueFrom, reduce, toArray } from 'rxjs';
import { ExecServerClient } from '../../src/client/index.js';
import { NoiseChannelIdentity } from '../../src/noise/index.js';
import { platformCryptoProvider } from '../../src/noise/platformCryptoProvider.js';
import { webCryptoAes256GcmOpener } from '../../src/platform/browser/webCryptoAesGcm.js';
import { DisconnectedError } from '../../src/protocol/errors.js';
import { connectNoiseHarness } from '../../src/transport/noiseHarnessTransport.js';
import { NoiseRelayStreamResetError } from '../../src/transport/noiseHarnessErrors.js';
import type { Transport } from '../../src/transport/transport.js';
import {
  providerFor,
  startNoiseExecServer,
  TestHarnessKeyValidator,
  type RunningNoiseExecServer,
} from '../support/noiseExecServer.js';

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!();
});

async function executor(
  options: Parameters<typeof startNoiseExecServer>[0] = {},
): Promise<RunningNoiseExecServer> {
  const server = await startNoiseExecServer(options);
  cleanups.push(() => server.stop());
  return server;
}

async function connect(server: RunningNoiseExecServer, identity = NoiseChannelIdentity.generate()) {
  const transport = await firstValueFrom(connectNoiseHarness(server.bundle(), identity));
  cleanups.push(() => transport.close());
  return transport;
}

async function client(transport: Transport): Promise<ExecServerClient> {
  const session = await firstValueFrom(
    ExecServerClient.connect(transport, { clientName: 'noise-spec' }),
  );
  cleanups.push(() => session.close());
  return session;
}

describe('connectNoiseHarness against our direct-Noise executor', () => {
  it('initializes a session, runs a process and round-trips a file', async () => {
    const server = await executor();
    const session = await client(await connect(server));
    expect(session.sessionId).toMatch(/\S/);

    const process = await firstValueFrom(
      session.startProcess({ argv: ['/bin/sh', '-c', 'printf hello-noise'], cwd: tmpdir() }),
    );
    const stdout = await lastValueFrom(
      process.stdout$.pipe(reduce((all, chunk) => all + Buffer.from(chunk).toString(), '')),
    );
    expect(stdout).toBe('hello-noise');
    expect(await lastValueFrom(process.exit$)).toBe(0);

    const dir = mkdtempSync(join(tmpdir(), 'noise-fs-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const file = join(dir, 'file.bin');
    const bytes = Uint8Array.from({ length: 4096 }, (_, i) => (i * 7) & 0xff);
    await lastValueFrom(session.fs.writeFile(file, bytes), { defaultValue: undefined });
    expect(Buffer.from(await firstValueFrom(session.fs.readFile(file))).equals(bytes)).toBe(true);
  });

  it('carries messages larger than one 61440-byte record both ways', async () => {
    const server = await executor();
    const session = await client(await connect(server));
    const dir = mkdtempSync(join(tmpdir(), 'noise-big-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const file = join(dir, 'big.bin');
    // 200 KB of bytes → ~267 KB of base64 JSON: five records each way.
    const bytes = Uint8Array.from({ length: 200_000 }, (_, i) => (i * 31 + 7) & 0xff);
    await lastValueFrom(session.fs.writeFile(file, bytes), { defaultValue: undefined });
    expect(Buffer.from(await firstValueFrom(session.fs.readFile(file))).equals(bytes)).toBe(true);
  });

  it('streams 2 MiB of process output intact', async () => {
    const server = await executor();
    const session = await client(await connect(server));
    const process = await firstValueFrom(
      session.startProcess({
        argv: ['/bin/sh', '-c', 'head -c 2097152 /dev/zero | tr "\\0" "x"'],
        cwd: tmpdir(),
      }),
    );
    const total = await lastValueFrom(
      process.stdout$.pipe(
        reduce((count, chunk) => {
          expect(chunk.every((byte) => byte === 0x78)).toBe(true);
          return count + chunk.length;
        }, 0),
      ),
    );
    expect(total).toBe(2 * 1024 * 1024);
  });

  it('serves many concurrent streams on one executor, each its own session', async () => {
    const server = await executor();
    const sessions = await Promise.all(
      Array.from({ length: 12 }, async () => client(await connect(server))),
    );
    expect(new Set(sessions.map((s) => s.sessionId)).size).toBe(12);
    const statuses = await Promise.all(sessions.map((s) => firstValueFrom(s.environmentStatus())));
    expect(statuses).toEqual(Array.from({ length: 12 }, () => 'ready'));
  });

  it('reports a handshake to a different executor key as a reset during the handshake', async () => {
    const server = await executor();
    const bundle = {
      ...server.bundle(),
      executorPublicKey: NoiseChannelIdentity.generate().toJSON(),
    };
    const error = await firstValueFrom(
      connectNoiseHarness(bundle, NoiseChannelIdentity.generate()),
    ).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(NoiseRelayStreamResetError);
    expect(error).toBeInstanceOf(DisconnectedError);
    expect((error as NoiseRelayStreamResetError).duringHandshake).toBe(true);
    expect((error as Error).message).toBe('Noise relay stream reset');
  });

  it('fails before opening a socket when the bundle key is unusable', async () => {
    const server = await executor();
    const bundle = {
      ...server.bundle(),
      executorPublicKey: { ...server.identity.toJSON(), suite: 'Noise_other' },
    };
    const error = await firstValueFrom(
      connectNoiseHarness(bundle, NoiseChannelIdentity.generate()),
    ).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DisconnectedError);
    expect((error as Error).message).toMatch(
      /^failed to start Noise relay handshake: invalid Noise channel public key/,
    );
    expect(server.server.socketCount).toBe(0);
  });

  it("delivers the executor's answers on incoming$ and completes it on close()", async () => {
    const server = await executor();
    const transport = await connect(server);
    const replies = transport.incoming$.pipe(toArray());
    const done = lastValueFrom(replies);
    transport.send(JSON.stringify({ id: 1, method: 'initialize', params: { clientName: 'x' } }));
    await new Promise((resolve) => setTimeout(resolve, 200));
    transport.close();
    const texts = await done;
    expect(JSON.parse(texts[0]!)).toMatchObject({
      id: 1,
      result: { sessionId: expect.any(String) },
    });
  });

  it('reports the reset sent when the executor closes the connection as "Noise relay stream reset"', async () => {
    const server = await executor();
    const transport = await connect(server);
    const outcome = lastValueFrom(transport.incoming$).catch((error: unknown) => error);
    transport.send(JSON.stringify({ id: 1, method: 'initialize', params: { clientName: 'x' } }));
    transport.send(JSON.stringify({ method: 'initialized' }));
    // The executor closes a connection on an unknown notification, as codex 0.169.0 does.
    transport.send(JSON.stringify({ method: 'no/such-notification' }));
    const error = await outcome;
    expect(error).toBeInstanceOf(NoiseRelayStreamResetError);
    expect((error as NoiseRelayStreamResetError).duringHandshake).toBe(false);
  });

  it('waits for a stalled validation (test validator) and completes once it is released', async () => {
    const validator = new TestHarnessKeyValidator({ stallHandshake: true });
    const server = await executor({ validator });
    let settled = false;
    const connecting = firstValueFrom(
      connectNoiseHarness(server.bundle(), NoiseChannelIdentity.generate()),
    ).finally(() => (settled = true));
    await validator.started.notified();
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(settled).toBe(false);
    validator.releaseHandshake();
    const transport = await connecting;
    cleanups.push(() => transport.close());
    expect(validator.calls).toHaveLength(1);
  });

  it('serves bundles from the test provider, whose lookups can be blocked and retargeted', async () => {
    const first = await executor();
    const second = await executor();
    const provider = providerFor(first);
    const identity = NoiseChannelIdentity.generate();
    const blocked = provider.blockNextLookup();
    const lookup = firstValueFrom(provider.connectBundle(identity.toJSON()));
    await provider.lookupStarted.notified();
    provider.target = second.target;
    blocked.release();
    const bundle = await lookup;
    expect(bundle.websocketUrl).toBe(second.url);
    const transport = await firstValueFrom(connectNoiseHarness(bundle, identity));
    cleanups.push(() => transport.close());
    const failing = provider.blockNextLookup();
    const failed = firstValueFrom(provider.connectBundle(identity.toJSON())).catch(
      (e: unknown) => e,
    );
    failing.fail();
    expect(await failed).toBeInstanceOf(Error);
    expect(provider.lookups).toHaveLength(2);
  });
});

describe("connectNoiseHarness with WebCrypto's asynchronous AES-GCM open (the browser path)", () => {
  /** The platform provider plus WebCrypto's open, counting the records it opens. */
  function webCryptoProvider(): { crypto: typeof platformCryptoProvider; opened: () => number } {
    const opener = webCryptoAes256GcmOpener()!;
    let opened = 0;
    return {
      crypto: {
        ...platformCryptoProvider,
        aes256GcmOpener: (key) => {
          const open = opener(key);
          return (nonce, ciphertext) => {
            opened += 1;
            return open(nonce, ciphertext);
          };
        },
      },
      opened: () => opened,
    };
  }

  async function connectAsync(
    server: RunningNoiseExecServer,
    crypto: typeof platformCryptoProvider,
  ) {
    const transport = await firstValueFrom(
      connectNoiseHarness(server.bundle(), NoiseChannelIdentity.generate(), { crypto }),
    );
    cleanups.push(() => transport.close());
    return transport;
  }

  it('streams 2 MiB of numbered lines intact and in order', async () => {
    const server = await executor();
    const { crypto, opened } = webCryptoProvider();
    const session = await client(await connectAsync(server, crypto));
    const process = await firstValueFrom(
      session.startProcess({ argv: ['/bin/sh', '-c', 'seq 1 300000'], cwd: tmpdir() }),
    );
    const stdout = await lastValueFrom(
      process.stdout$.pipe(reduce((all, chunk) => all + Buffer.from(chunk).toString(), '')),
    );
    const expected = Array.from({ length: 300_000 }, (_, i) => `${i + 1}\n`).join('');
    expect(stdout.length).toBe(expected.length);
    expect(stdout === expected).toBe(true);
    expect(await lastValueFrom(process.exit$)).toBe(0);
    expect(opened()).toBeGreaterThan(30);
  });

  it('delivers the answers that came before a reset, then the reset error', async () => {
    const server = await executor();
    const transport = await connectAsync(server, webCryptoProvider().crypto);
    const texts: string[] = [];
    const outcome = new Promise<unknown>((resolve) =>
      transport.incoming$.subscribe({
        next: (text) => texts.push(text),
        error: resolve,
        complete: () => resolve(undefined),
      }),
    );
    transport.send(JSON.stringify({ id: 1, method: 'initialize', params: { clientName: 'x' } }));
    transport.send(JSON.stringify({ method: 'initialized' }));
    transport.send(JSON.stringify({ method: 'no/such-notification' }));
    expect(await outcome).toBeInstanceOf(NoiseRelayStreamResetError);
    expect(JSON.parse(texts[0]!)).toMatchObject({
      id: 1,
      result: { sessionId: expect.any(String) },
    });
  });
});
