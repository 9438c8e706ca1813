import { afterEach, describe, expect, it } from '@jest/globals';
import { firstValueFrom } from 'rxjs';
import { ExecServerClient } from '../../../src/client/index.js';
import { NoiseChannelIdentity } from '../../../src/noise/index.js';
import { EnvironmentRegistryConfigError } from '../../../src/registry/index.js';
import {
  startRemoteExecServer,
  type RemoteEnvironmentEvent,
  type RemoteExecServerOptions,
} from '../../../src/server/relay/index.js';
import { connectNoiseHarness } from '../../../src/transport/noiseHarnessTransport.js';
import { NoiseRelayStreamResetError } from '../../../src/transport/noiseHarnessErrors.js';
import { MockRendezvous } from './mockRendezvous.js';

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!();
});

async function setup(options: Partial<RemoteExecServerOptions> = {}) {
  const mock = await MockRendezvous.start();
  cleanups.push(() => mock.stop());
  const events: RemoteEnvironmentEvent[] = [];
  const attached = mock.nextExecutorSocket();
  const server = await startRemoteExecServer({
    registryUrl: mock.baseUrl,
    environmentId: mock.environmentId,
    apiKey: 'sk-test-key',
    backoff: { initialMs: 20, maxMs: 80 },
    onEvent: (event) => events.push(event),
    ...options,
  });
  cleanups.push(() => server.close());
  await attached;
  return { mock, server, events };
}

async function session(mock: MockRendezvous, resumeSessionId: string | null = null) {
  const transport = await firstValueFrom(
    connectNoiseHarness(mock.bundle(), NoiseChannelIdentity.generate()),
  );
  const client = await firstValueFrom(
    ExecServerClient.connect(transport, { clientName: 'remote-spec', resumeSessionId }),
  );
  cleanups.push(() => client.close());
  return client;
}

describe('startRemoteExecServer', () => {
  it('registers its key, attaches to the rendezvous and admits harnesses the registry validates', async () => {
    const { mock, server } = await setup();
    expect(mock.registrations).toHaveLength(1);
    const registration = mock.registrations[0]!;
    expect(registration.headers.authorization).toBe('Bearer sk-test-key');
    expect(registration.body).toEqual({
      security_profile: 'noise_hybrid_ik_v1',
      executor_public_key: server.identity.toJSON(),
    });
    expect(mock.upgrades[0]?.headers['x-request-id']).toMatch(/\S/);

    const client = await session(mock);
    expect(await firstValueFrom(client.environmentStatus())).toBe('ready');
    expect(mock.validations).toHaveLength(1);
    const validation = mock.validations[0]!;
    expect(validation.headers['x-codex-noise-stream-id']).toMatch(/^[0-9a-f-]{36}$/);
    expect(validation.headers.authorization).toBe('Bearer sk-test-key');
    expect(validation.body).toMatchObject({
      executor_registration_id: 'registration-1',
      harness_key_authorization: 'harness-authorization',
    });
  });

  it('resets harnesses the registry does not validate', async () => {
    const { mock } = await setup();
    mock.valid = false;
    const error = await firstValueFrom(
      connectNoiseHarness(mock.bundle(), NoiseChannelIdentity.generate()),
    ).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(NoiseRelayStreamResetError);
  });

  it('reconnects after the relay socket drops, and sessions resume', async () => {
    const { mock, events } = await setup();
    const first = await session(mock);
    const sessionId = first.sessionId;
    first.close();
    const reattached = mock.nextExecutorSocket();
    mock.dropExecutor();
    await reattached;
    expect(events).toContainEqual({ kind: 'disconnected', reason: 'peer_close' });
    expect(mock.registrations).toHaveLength(1);
    let resumed: string | undefined;
    for (let i = 0; i < 50 && resumed === undefined; i++) {
      resumed = await session(mock, sessionId).then(
        (client) => client.sessionId,
        () => undefined,
      );
      if (resumed === undefined) await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(resumed).toBe(sessionId);
  });

  it('registers again with the same key when the rendezvous URL answers 4xx', async () => {
    const { mock, server, events } = await setup();
    mock.expireRegistration();
    const reattached = mock.nextExecutorSocket();
    mock.dropExecutor();
    await reattached;
    expect(mock.upgrades.map((u) => u.status)).toContain(404);
    expect(events).toContainEqual(expect.objectContaining({ kind: 'connect-failed', status: 404 }));
    expect(mock.registrations).toHaveLength(2);
    expect(mock.registrations[1]!.body.executor_public_key).toEqual(server.identity.toJSON());
    const client = await session(mock);
    expect(await firstValueFrom(client.environmentStatus())).toBe('ready');
    expect(mock.validations.at(-1)?.body.executor_registration_id).toBe('registration-2');
  });

  it('backs off between failed attempts, doubling up to the cap', async () => {
    const { mock, events } = await setup();
    await mock.stop();
    mock.dropExecutor();
    for (let i = 0; i < 100 && events.filter((e) => e.kind === 'retrying').length < 4; i++) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const delays = events.flatMap((e) => (e.kind === 'retrying' ? [e.delayMs] : []));
    expect(delays.slice(0, 4)).toEqual([20, 40, 80, 80]);
  });

  it('refuses to start without an API key', async () => {
    const previous = process.env.CODEX_API_KEY;
    delete process.env.CODEX_API_KEY;
    cleanups.push(() => {
      if (previous !== undefined) process.env.CODEX_API_KEY = previous;
    });
    await expect(
      startRemoteExecServer({ registryUrl: 'http://127.0.0.1:1', environmentId: 'x' }),
    ).rejects.toBeInstanceOf(EnvironmentRegistryConfigError);
  });
});
