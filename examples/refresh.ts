/**
 * A refresh: an environment on the encrypted path moves to the executor the registry names
 * now. A self-hosted rendezvous (registry + relay) gets executor A, a client connects to it
 * over Noise; then A is taken down, the operator frees the environment id (an id stays bound
 * to its first executor key until then), executor B registers under it and
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

const executorToken = 'example-executor-token'; // executors register with it
const harnessToken = 'example-harness-token'; // clients look environments up with it
const environmentId = 'demo';
const rendezvous = await startRendezvous({
  listen: 'http://127.0.0.1:0',
  executorToken,
  harnessToken,
});
// An executor as `execrx serve --remote URL --environment-id demo` runs it.
const startExecutor = () =>
  startRemoteExecServer({ registryUrl: rendezvous.url, environmentId, apiKey: executorToken });

const executorA = await startExecutor();
const registry = new EnvironmentRegistryClient({
  baseUrl: rendezvous.url,
  bearerToken: harnessToken,
});
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

await executorA.close();
await rendezvous.evict(environmentId); // the operator frees the id for another executor key
const executorB = await startExecutor();
names.set(executorB.registration.executorRegistrationId, 'B');
console.log('executor B registered under the same environment id');
await lastValueFrom(environment.refreshConnection(), { defaultValue: undefined });

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
