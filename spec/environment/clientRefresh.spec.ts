/**
 * TypeScript twins of upstream `client_refresh_tests.rs` (shared/seed), one `it` per seed
 * test with the seed's name, over real 127.0.0.1 sockets.
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import { createServer, type Server } from 'node:net';
import { firstValueFrom, lastValueFrom, type Observable } from 'rxjs';
import type { ExecServerClient, ProcessHandle } from '../../src/client/index.js';
import {
  ConnectionAttemptError,
  EnvironmentManager,
  LazyRemoteExecServerClient,
  noiseRendezvous,
} from '../../src/environment/index.js';
import { NoiseChannelIdentity } from '../../src/noise/index.js';
import { DisconnectedError } from '../../src/protocol/errors.js';
import {
  ControlledValidator,
  RecordingHarness,
  closeAllExecutors,
  startTestExecutor,
  type TestExecutor,
} from './support/testExecutors.js';
import { TestRegistry } from './support/testRegistry.js';

const clients: { close(): void }[] = [];
const servers: Server[] = [];

afterEach(async () => {
  for (const client of clients.splice(0)) client.close();
  await Promise.all(servers.splice(0).map((s) => new Promise((r) => s.close(r))));
  await closeAllExecutors();
});

function lazyClient(executor: TestExecutor) {
  const registry = new TestRegistry(executor.target);
  const harness = new RecordingHarness();
  const client = new LazyRemoteExecServerClient(
    noiseRendezvous(registry, NoiseChannelIdentity.generate(), { connectHarness: harness.connect }),
  );
  clients.push(client);
  return { client, registry, harness };
}

/** Subscribes now and records the outcome; `done` settles with it. */
function track<T>(source: Observable<T>) {
  const seen: { values: T[]; error?: unknown; completed: boolean; done: Promise<void> } = {
    values: [],
    completed: false,
    done: Promise.resolve(),
  };
  seen.done = new Promise<void>((resolve) => {
    source.subscribe({
      next: (value) => seen.values.push(value),
      error: (error: unknown) => {
        seen.error = error;
        resolve();
      },
      complete: () => {
        seen.completed = true;
        resolve();
      },
    });
  });
  return seen;
}

const refresh = (client: LazyRemoteExecServerClient) =>
  lastValueFrom(client.refreshConnection(), { defaultValue: undefined });

async function startCat(client: ExecServerClient): Promise<ProcessHandle> {
  return firstValueFrom(
    client.startProcess({
      argv: ['cat'],
      cwd: '/tmp',
      pipeStdin: true,
      env: { PATH: process.env.PATH ?? '' },
    }),
  );
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe('connection refresh (seed: client_refresh_tests.rs)', () => {
  it('refresh_cancels_old_recovery_and_connects_without_resuming_old_session', async () => {
    const old = await startTestExecutor();
    const replacementExecutor = await startTestExecutor();
    const { client, registry, harness } = lazyClient(old);
    const original = await firstValueFrom(client.get());
    const process = await startCat(original);
    const blockedRecovery = registry.blockNextLookup();
    harness.dropLatest();
    await blockedRecovery.started;
    expect(original.state).toBe('recovering');
    registry.target = replacementExecutor.target;

    const refreshing = track(client.refreshConnection());
    // Retired synchronously, within the subscription: no time passed, recovery abandoned.
    expect(original.state).toBe('retired');
    expect(blockedRecovery.abandoned).toBe(true);
    expect(client.connectionState).toBe('Disconnected');
    expect(refreshing.completed).toBe(false);
    await refreshing.done;
    expect(refreshing.error).toBeUndefined();

    const replacement = await firstValueFrom(client.get());
    expect(replacement.sessionId).not.toBe(original.sessionId);
    expect(client.connectionState).toBe('Connected');
    await expect(firstValueFrom(process.write('never replay'))).rejects.toBeInstanceOf(
      DisconnectedError,
    );
    // Releasing the old registry response cannot reinstall or disconnect the replacement.
    blockedRecovery.release();
    await tick();
    expect(await firstValueFrom(client.get())).toBe(replacement);
    expect(await firstValueFrom(replacement.environmentStatus())).toBe('ready');
  });

  it('refresh_retires_a_still_connected_old_executor', async () => {
    const old = await startTestExecutor();
    const replacementExecutor = await startTestExecutor();
    const { client, registry } = lazyClient(old);
    const original = await firstValueFrom(client.get());
    registry.target = replacementExecutor.target;
    await refresh(client);
    expect(original.state).toBe('retired');
    expect((await firstValueFrom(client.get())).sessionId).not.toBe(original.sessionId);
  });

  it('refresh_preserves_a_current_session_across_registration_renewal', async () => {
    const executor = await startTestExecutor();
    const { client, registry } = lazyClient(executor);
    const original = await firstValueFrom(client.get());
    registry.target = { ...registry.target, registration: 'renewed-registration' };
    const lookupsBefore = registry.lookups;
    const concurrent = refresh(client);
    await refresh(client);
    await concurrent;
    expect(registry.lookups).toBeGreaterThan(lookupsBefore);
    expect(await firstValueFrom(client.get())).toBe(original);
    expect(original.state).toBe('connected');
    expect(client.executorRegistrationId).toBe('renewed-registration');
    expect(await firstValueFrom(original.environmentStatus())).toBe('ready');
  });

  it('refresh_cancels_a_stalled_initial_lookup', async () => {
    const old = await startTestExecutor();
    const replacementExecutor = await startTestExecutor();
    const { client, registry } = lazyClient(old);
    const release = registry.blockNextLookup();
    const initial = track(client.get());
    await release.started;
    expect(initial.completed || initial.error !== undefined).toBe(false);
    registry.target = replacementExecutor.target;
    await refresh(client);
    await initial.done;
    expect(initial.error).toBeInstanceOf(ConnectionAttemptError);
    expect(release.abandoned).toBe(true);
    release.release();
    const client2 = await firstValueFrom(client.get());
    expect(await firstValueFrom(client2.environmentStatus())).toBe('ready');
  });

  it('refresh_cancels_a_stalled_noise_handshake', async () => {
    const validator = new ControlledValidator(true);
    const old = await startTestExecutor(validator);
    const replacementExecutor = await startTestExecutor();
    const { client, registry } = lazyClient(old);
    const initial = track(client.get());
    await validator.started;
    registry.target = replacementExecutor.target;
    await refresh(client);
    await initial.done;
    expect(initial.error).toBeInstanceOf(ConnectionAttemptError);
    validator.release();
    await tick();
    const current = await firstValueFrom(client.get());
    expect(await firstValueFrom(current.environmentStatus())).toBe('ready');
    expect(client.connectionState).toBe('Connected');
  });

  it('failed_refresh_lookup_leaves_the_existing_session_usable', async () => {
    const executor = await startTestExecutor();
    const { client, registry } = lazyClient(executor);
    const original = await firstValueFrom(client.get());
    registry.blockNextLookup().fail();
    await expect(refresh(client)).rejects.toThrow('test lookup failed');
    expect(await firstValueFrom(client.get())).toBe(original);
    expect(original.state).toBe('connected');
    expect(await firstValueFrom(original.environmentStatus())).toBe('ready');
  });

  it('failed_replacement_connection_keeps_old_handles_retired_and_get_retries', async () => {
    const old = await startTestExecutor();
    const replacementExecutor = await startTestExecutor();
    const { client, registry } = lazyClient(old);
    const original = await firstValueFrom(client.get());
    const process = await startCat(original);

    // The registry knows the replacement, but its endpoint drops the new connection.
    const unavailable = createServer((socket) => socket.destroy());
    servers.push(unavailable);
    await new Promise<void>((resolve) => unavailable.listen(0, '127.0.0.1', resolve));
    const address = unavailable.address();
    if (address === null || typeof address === 'string') throw new Error('no port');
    registry.target = { ...replacementExecutor.target, url: `ws://127.0.0.1:${address.port}` };
    await expect(refresh(client)).rejects.toBeInstanceOf(ConnectionAttemptError);
    expect(original.state).toBe('retired');
    await expect(firstValueFrom(original.environmentStatus())).rejects.toBeInstanceOf(
      DisconnectedError,
    );
    await expect(firstValueFrom(process.write('never replay'))).rejects.toBeInstanceOf(
      DisconnectedError,
    );
    expect(client.connectionState).toBe('Disconnected');

    // A later caller retries against the registry instead of reviving the retired client.
    registry.target = replacementExecutor.target;
    const replacement = await firstValueFrom(client.get());
    expect(replacement.sessionId).not.toBe(original.sessionId);
    expect(await firstValueFrom(replacement.environmentStatus())).toBe('ready');
    expect(client.connectionState).toBe('Connected');
    await expect(firstValueFrom(process.write('still retired'))).rejects.toBeInstanceOf(
      DisconnectedError,
    );
  });

  it('superseded_refresh_lookup_does_not_retire_a_newer_session', async () => {
    const old = await startTestExecutor();
    const replacementExecutor = await startTestExecutor();
    const { client, registry } = lazyClient(old);
    const original = await firstValueFrom(client.get());
    const release = registry.blockNextLookup();
    const refreshing = track(client.refreshConnection());
    await release.started;
    expect(refreshing.completed).toBe(false);
    registry.target = replacementExecutor.target;
    original.retire();
    const replacement = await firstValueFrom(client.get());
    release.release();
    await refreshing.done;
    expect(refreshing.error).toBeUndefined();
    expect(await firstValueFrom(client.get())).toBe(replacement);
    expect(replacement.state).toBe('connected');
    expect(await firstValueFrom(replacement.environmentStatus())).toBe('ready');
  });

  it('environment_refresh_preserves_environment_and_filesystem_handles', async () => {
    const old = await startTestExecutor();
    const replacementExecutor = await startTestExecutor();
    const registry = new TestRegistry(old.target);
    const harness = new RecordingHarness();
    const manager = EnvironmentManager.fromSnapshot(
      { environments: [], default: 'disabled', includeLocal: false },
      { connectHarness: harness.connect },
    );
    clients.push(manager);
    const environment = manager.materializePendingNoiseEnvironment('environment', registry);
    manager.reportEnvironmentProvisioningStatus(
      'environment',
      { ready: { selectedCapabilityRoots: [] } },
      registry,
    );
    await firstValueFrom(environment.info());
    const firstSession = await firstValueFrom(environment.client.get());
    const filesystem = environment.getFilesystem();
    registry.target = replacementExecutor.target;
    await lastValueFrom(environment.refreshConnection(), { defaultValue: undefined });
    expect(manager.getEnvironment('environment')).toBe(environment);
    expect(environment.getFilesystem()).toBe(filesystem);
    expect(firstSession.state).toBe('retired');
    expect((await firstValueFrom(environment.client.get())).sessionId).not.toBe(
      firstSession.sessionId,
    );
    await firstValueFrom(environment.info());
    // The stable filesystem object works on the replacement session.
    const metadata = await firstValueFrom(filesystem.getMetadata('/tmp'));
    expect(metadata.isDirectory).toBe(true);
  });

  it('refresh_does_not_accept_cached_metadata_during_recovery', async () => {
    const executor = await startTestExecutor();
    const { client, registry, harness } = lazyClient(executor);
    const original = await firstValueFrom(client.get());
    await firstValueFrom(original.environmentInfo());
    const blockedRecovery = registry.blockNextLookup();
    harness.dropLatest();
    await blockedRecovery.started;
    const refreshing = track(client.refreshConnection());
    // Fails at once (no time passes): the live probe never waits for recovery.
    expect(refreshing.error).toBeInstanceOf(DisconnectedError);
    expect((refreshing.error as Error).message).toBe('exec-server environment is recovering');
    expect(original.state).toBe('recovering');
    blockedRecovery.fail();
  });

  it('refresh_before_startup_marks_startup_finished', async () => {
    const executor = await startTestExecutor();
    const { client } = lazyClient(executor);
    expect(client.startupFinished).toBe(false);
    await refresh(client);
    expect(client.startupFinished).toBe(true);
    expect(client.readinessResult).toEqual({ ready: true });
  });
});
