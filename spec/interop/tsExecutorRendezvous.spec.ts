/**
 * Our TypeScript executor behind our rendezvous: registered with the registry, attached as
 * `role=environment`, validating harness keys with `/validate`; our harness reaches it with
 * a `/connect` bundle. The same path the codex binary takes in codexNoise.spec.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { tmpdir } from 'node:os';
import { filter, lastValueFrom, switchMap, timeout, toArray } from 'rxjs';
import { ExecServerClient } from '../../src/client/index.js';
import { NoiseChannelIdentity } from '../../src/noise/index.js';
import { EnvironmentRegistryClient } from '../../src/registry/index.js';
import { startRemoteExecServer } from '../../src/server/relay/remoteEnvironment.js';
import type { Rendezvous, RendezvousEvent } from '../../src/rendezvous/index.js';
import { connectNoiseHarness } from '../../src/transport/noiseHarnessTransport.js';
import { NoiseRelayStreamResetError } from '../../src/transport/noiseHarnessErrors.js';
import { attachTsExecutor, type RendezvousTsExecutor } from '../support/rendezvousExecutor.js';
import {
  framesToExecutor,
  rendezvousHarness,
  startRendezvousSetup,
  within,
  type RendezvousHarness,
  type RendezvousSetup,
} from '../support/rendezvousHarness.js';

const TOKEN = 'ts-executor-token';

let setup: RendezvousSetup<RendezvousTsExecutor>;
let rendezvous: Rendezvous;
let executor: RendezvousTsExecutor;
let harness: RendezvousHarness;
let events: RendezvousEvent[];
let clients: ExecServerClient[];

beforeAll(async () => {
  setup = await startRendezvousSetup({ executorToken: TOKEN }, (started) =>
    attachTsExecutor(started, TOKEN),
  );
  ({ rendezvous, executor, harness, events, clients } = setup);
});

afterAll(async () => {
  await setup?.stop();
});

describe('our harness ↔ rendezvous ↔ our TypeScript executor', () => {
  it('runs a process through the relay after a registry-validated handshake', async () => {
    const client = await setup.openClient({ clientName: 'ts' });
    const handle = await within(
      client.startProcess({
        argv: ['sh', '-c', 'printf hello'],
        cwd: tmpdir(),
        env: { PATH: '/usr/bin:/bin' },
      }),
    );
    const stdout = await lastValueFrom(handle.stdout$.pipe(toArray(), timeout(10_000)));
    expect(Buffer.concat(stdout).toString()).toBe('hello');
    expect(events).toContainEqual(
      expect.objectContaining({
        type: 'validated',
        valid: true,
        environmentId: executor.environmentId,
      }),
    );
  });

  it('refuses a harness whose authorization was minted for another key', async () => {
    const bundle = await harness.bundle();
    const stranger = rendezvousHarness(rendezvous, executor.environmentId, rendezvous.harnessToken);
    const streamId = crypto.randomUUID();
    // The stranger presents the first harness's authorization with its own key.
    const error = await within(connectNoiseHarness(bundle, stranger.identity, { streamId })).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(NoiseRelayStreamResetError);
    expect(events).toContainEqual(
      expect.objectContaining({
        type: 'validated',
        streamId,
        valid: false,
        rejection: 'bad_signature',
      }),
    );
    expect(framesToExecutor(events, streamId)).toEqual(['resume', 'handshake']);
  });
});

describe('startRemoteExecServer (--remote mode) through our rendezvous', () => {
  it('registers, attaches, serves a harness, and re-registers after being superseded', async () => {
    const environmentId = `remote-${crypto.randomUUID()}`;
    const attached = () =>
      within(
        rendezvous.events.pipe(
          filter(
            (event) => event.type === 'executor-attached' && event.environmentId === environmentId,
          ),
        ),
      );
    const firstAttach = attached();
    const remote = await startRemoteExecServer({
      registryUrl: rendezvous.url,
      environmentId,
      apiKey: TOKEN,
      backoff: { initialMs: 50, maxMs: 200 },
    });
    try {
      expect(await firstAttach).toMatchObject({
        registrationId: remote.registration.executorRegistrationId,
      });
      const run = async (): Promise<string> => {
        const client = await within(
          rendezvousHarness(rendezvous, environmentId, rendezvous.harnessToken)
            .connect()
            .pipe(
              switchMap((transport) => ExecServerClient.connect(transport, { clientName: 'ts' })),
            ),
        );
        clients.push(client);
        const handle = await within(
          client.startProcess({
            argv: ['sh', '-c', 'printf remote'],
            cwd: tmpdir(),
            env: { PATH: '/usr/bin:/bin' },
          }),
        );
        const out = await lastValueFrom(handle.stdout$.pipe(toArray(), timeout(10_000)));
        return Buffer.concat(out).toString();
      };
      expect(await run()).toBe('remote');

      const secondAttach = attached();
      const usurper = new EnvironmentRegistryClient({
        baseUrl: rendezvous.url,
        bearerToken: TOKEN,
      });
      // Another key cannot take the environment over (409 environment_bound) ...
      const refused = await within(
        usurper.register(environmentId, NoiseChannelIdentity.generate().toJSON()),
      ).catch((error: unknown) => error);
      expect(refused).toMatchObject({ status: 409 });
      // ... but once the operator deletes the registration, the executor registers again.
      expect(await rendezvous.evict(environmentId)).toBe(true);
      const again = await secondAttach;
      expect(again).toMatchObject({ registrationId: remote.registration.executorRegistrationId });
      expect((await rendezvous.environment(environmentId))?.executorPublicKey).toEqual(
        remote.identity.toJSON(),
      );
      expect(await run()).toBe('remote');
    } finally {
      await remote.close();
    }
  });
});
