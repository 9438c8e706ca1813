/**
 * A refresh: an environment on the encrypted path moves to the executor the registry names
 * now. A self-hosted rendezvous (registry + relay) gets executor A, a client connects to it
 * over Noise, then executor B registers under the same environment id and
 * `refreshConnection()` moves the client there.
 *
 *   npx tsx examples/refresh.ts
 *
 * B has another key, so the old session is retired: its observables error with
 * `DisconnectedError` and nothing is replayed onto the new session. (Had the key been the
 * same, refresh would have kept the session.)
 */
import { firstValueFrom, lastValueFrom } from 'rxjs';
import {
  DisconnectedError,
  EnvironmentRegistryClient,
  LazyRemoteExecServerClient,
  NoiseChannelIdentity,
  RegistryConnectProvider,
  noiseRendezvous,
} from 'execrx';
import { startRendezvous } from 'execrx/rendezvous';
import { startRemoteExecServer } from 'execrx/server';

const token = 'example-token';
const environmentId = 'demo';
const rendezvous = await startRendezvous({ listen: 'http://127.0.0.1:0', executorToken: token });
// An executor as `execrx serve --remote URL --environment-id demo` runs it.
const startExecutor = () =>
  startRemoteExecServer({ registryUrl: rendezvous.url, environmentId, apiKey: token });

const executorA = await startExecutor();
const registry = new EnvironmentRegistryClient({ baseUrl: rendezvous.url, bearerToken: token });
const environment = new LazyRemoteExecServerClient(
  noiseRendezvous(
    new RegistryConnectProvider(registry, environmentId),
    NoiseChannelIdentity.generate(),
  ),
);
const names = new Map([[executorA.registration.executorRegistrationId, 'A']]);
const servedBy = () => names.get(environment.executorRegistrationId ?? '') ?? 'unknown';

const before = await firstValueFrom(environment.get());
await firstValueFrom(before.fs.getMetadata('/'));
console.log(`connected to executor ${servedBy()}`);

const executorB = await startExecutor();
names.set(executorB.registration.executorRegistrationId, 'B');
console.log('executor B registered under the same environment id');
await lastValueFrom(environment.refreshConnection(), { defaultValue: undefined });
await executorA.close(); // the registry names B now; A is no longer needed

const after = await firstValueFrom(environment.get());
await firstValueFrom(after.fs.getMetadata('/'));
console.log(`after refresh: executor ${servedBy()}, new session: ${after !== before}`);
try {
  await firstValueFrom(before.fs.getMetadata('/'));
} catch (error) {
  console.log(
    `the retired session fails with ${error instanceof DisconnectedError ? 'DisconnectedError' : error}`,
  );
}

environment.close();
await executorB.close();
await rendezvous.close();
