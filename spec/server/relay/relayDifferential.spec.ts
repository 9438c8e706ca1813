/**
 * The same relay exchanges against the real `codex exec-server --remote` (0.169.0) and against
 * our `startRemoteExecServer`, both registered with the same kind of mock registry+rendezvous:
 * our harness transport end to end, and the executor's per-socket state machine driven frame by
 * frame (wrong prologue, the observed failure budget).
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { firstValueFrom, lastValueFrom, reduce } from 'rxjs';
import { ExecServerClient } from '../../../src/client/index.js';
import { NoiseChannelIdentity, NoiseChannelPublicKey } from '../../../src/noise/index.js';
import { startRemoteExecServer } from '../../../src/server/relay/index.js';
import { connectNoiseHarness } from '../../../src/transport/noiseHarnessTransport.js';
import { codexCommand } from '../../support/codexExecServer.js';
import { MockRendezvous } from './mockRendezvous.js';
import { RawRelayClient, type RawRelayTarget } from './rawRelayClient.js';

interface RemoteExecutor {
  readonly mock: MockRendezvous;
  stop(): Promise<void>;
}

async function startCodex(): Promise<RemoteExecutor> {
  const mock = await MockRendezvous.start('differential-env');
  const home = await mkdtemp(join(tmpdir(), 'codex-home-'));
  const attached = mock.nextExecutorSocket();
  const { command, prefixArgs } = codexCommand();
  const child: ChildProcess = spawn(
    command,
    [
      ...prefixArgs,
      'exec-server',
      '--remote',
      mock.baseUrl,
      '--environment-id',
      mock.environmentId,
    ],
    {
      env: { PATH: process.env.PATH ?? '', CODEX_HOME: home, CODEX_API_KEY: 'sk-test-diff' },
      stdio: 'ignore',
    },
  );
  await attached;
  return {
    mock,
    stop: async () => {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGKILL');
      await exited;
      await mock.stop();
      await rm(home, { recursive: true, force: true });
    },
  };
}

async function startOurs(): Promise<RemoteExecutor> {
  const mock = await MockRendezvous.start('differential-env');
  const attached = mock.nextExecutorSocket();
  const server = await startRemoteExecServer({
    registryUrl: mock.baseUrl,
    environmentId: mock.environmentId,
    apiKey: 'sk-test-diff',
  });
  await attached;
  return {
    mock,
    stop: async () => {
      await server.close();
      await mock.stop();
    },
  };
}

function target(mock: MockRendezvous): RawRelayTarget {
  const bundle = mock.bundle();
  return {
    url: bundle.websocketUrl,
    environmentId: bundle.environmentId,
    registrationId: bundle.executorRegistrationId,
    executorKey: NoiseChannelPublicKey.fromJSON(bundle.executorPublicKey),
  };
}

describe.each([
  ['codex exec-server 0.169.0', startCodex],
  ['the TypeScript executor', startOurs],
])('Noise relay against %s (--remote behind a mock rendezvous)', (_name, start) => {
  let executor: RemoteExecutor;
  const clients: RawRelayClient[] = [];
  beforeAll(async () => {
    executor = await start();
  }, 30_000);
  afterAll(async () => {
    for (const client of clients) client.close();
    await executor?.stop();
  });

  async function open(): Promise<RawRelayClient> {
    const client = await RawRelayClient.open(target(executor.mock));
    clients.push(client);
    return client;
  }

  it('serves our harness: initialize, multi-record output and a 150 KB file round trip', async () => {
    const transport = await firstValueFrom(
      connectNoiseHarness(executor.mock.bundle(), NoiseChannelIdentity.generate()),
    );
    const client = await firstValueFrom(
      ExecServerClient.connect(transport, { clientName: 'differential' }),
    );
    try {
      const validation = executor.mock.validations.at(-1)!;
      expect(validation.headers['x-codex-noise-stream-id']).toMatch(/^[0-9a-f-]{36}$/);
      const child = await firstValueFrom(
        client.startProcess({
          argv: ['/bin/sh', '-c', 'head -c 200000 /dev/zero | tr "\\0" y'],
          cwd: tmpdir(),
        }),
      );
      expect(await lastValueFrom(child.stdout$.pipe(reduce((n, c) => n + c.length, 0)))).toBe(
        200_000,
      );
      const dir = await mkdtemp(join(tmpdir(), 'noise-diff-'));
      const data = Buffer.alloc(150_000, 'q');
      await lastValueFrom(client.fs.writeFile(join(dir, 'f'), data), { defaultValue: undefined });
      expect(
        Buffer.from(await firstValueFrom(client.fs.readFile(join(dir, 'f')))).equals(data),
      ).toBe(true);
      await rm(dir, { recursive: true, force: true });
    } finally {
      client.close();
    }
  });

  it('resets a wrong prologue with noise_relay_protocol_error without validating', async () => {
    const client = await open();
    const before = executor.mock.validations.length;
    const { streamId, reply } = client.handshake({ environmentId: 'another-environment' });
    expect(await reply).toBe('reset');
    expect(client.framesOn(streamId)).toEqual([
      { kind: 'reset', streamId, reason: 'noise_relay_protocol_error' },
    ]);
    expect(executor.mock.validations.length).toBe(before);
  });

  it('after the 8th failure keeps the socket and open streams but refuses new handshakes without validating', async () => {
    const client = await open();
    const survivor = await client.openStream();
    await survivor.initialize();
    // The wrong-prologue test above already counted one failure on this executor socket.
    for (let i = 0; i < 7; i++)
      expect(await client.handshake({ tamper: true }).reply).toBe('reset');
    const before = executor.mock.validations.length;
    expect(await client.handshake().reply).toBe('reset');
    expect(executor.mock.validations.length).toBe(before);
    expect((await survivor.request('environment/status')).result).toBeDefined();
    expect(executor.mock.registrations).toHaveLength(1);
    expect(executor.mock.upgrades.filter((u) => u.status === 101)).toHaveLength(1);
  });
});
