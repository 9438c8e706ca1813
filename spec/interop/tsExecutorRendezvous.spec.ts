/**
 * Our TypeScript executor behind our rendezvous: registered with the registry, attached as
 * `role=environment`, validating harness keys with `/validate`; our harness reaches it with
 * a `/connect` bundle. The same path the codex binary takes in codexNoise.spec.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { tmpdir } from 'node:os';
import {
  type Observable,
  filter,
  firstValueFrom,
  lastValueFrom,
  switchMap,
  timeout,
  toArray,
} from 'rxjs';
import { ExecServerClient } from '../../src/client/index.js';
import { NoiseChannelIdentity } from '../../src/noise/index.js';
import { EnvironmentRegistryClient } from '../../src/registry/index.js';
import { startRemoteExecServer } from '../../src/server/relay/remoteEnvironment.js';
import {
  startRendezvous,
  type Rendezvous,
  type RendezvousEvent,
} from '../../src/rendezvous/index.js';
import { connectNoiseHarness } from '../../src/transport/noiseHarnessTransport.js';
import { NoiseRelayStreamResetError } from '../../src/transport/noiseHarnessErrors.js';
import { attachTsExecutor, type RendezvousTsExecutor } from '../support/rendezvousExecutor.js';
import { rendezvousHarness, type RendezvousHarness } from '../support/rendezvousHarness.js';

const TOKEN = 'ts-executor-token';
const within = <T>(source: Observable<T>, ms = 10_000): Promise<T> =>
  firstValueFrom(source.pipe(timeout(ms)));

let rendezvous: Rendezvous;
let executor: RendezvousTsExecutor;
let harness: RendezvousHarness;
const events: RendezvousEvent[] = [];
const clients: ExecServerClient[] = [];

beforeAll(async () => {
  rendezvous = await startRendezvous({ executorToken: TOKEN });
  rendezvous.events.subscribe((event) => events.push(event));
  executor = await attachTsExecutor(rendezvous, TOKEN);
  harness = rendezvousHarness(rendezvous, executor.environmentId, TOKEN);
});

afterAll(async () => {
  for (const client of clients) client.close();
  await executor?.stop();
  await rendezvous?.close();
});

describe('our harness ↔ rendezvous ↔ our TypeScript executor', () => {
  it('runs a process through the relay after a registry-validated handshake', async () => {
    const client = await within(
      harness
        .connect()
        .pipe(switchMap((transport) => ExecServerClient.connect(transport, { clientName: 'ts' }))),
    );
    clients.push(client);
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
    const stranger = rendezvousHarness(rendezvous, executor.environmentId, TOKEN);
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
    const toExecutor = events.flatMap((event) =>
      event.type === 'frame-forwarded' && event.streamId === streamId && event.to === 'environment'
        ? [event.kind]
        : [],
    );
    expect(toExecutor).toEqual(['resume', 'handshake']);
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
          rendezvousHarness(rendezvous, environmentId, TOKEN)
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
      await within(usurper.register(environmentId, NoiseChannelIdentity.generate().toJSON()));
      const again = await secondAttach;
      expect(again).toMatchObject({ registrationId: remote.registration.executorRegistrationId });
      expect(rendezvous.environment(environmentId)?.executorPublicKey).toEqual(
        remote.identity.toJSON(),
      );
      expect(await run()).toBe('remote');
    } finally {
      await remote.close();
    }
  });
});
