/**
 * Test helpers for the Noise path through one of our rendezvous servers:
 *
 * - `rendezvousHarness()`: the harness side — `/connect` with the registry client, then
 *   `connectNoiseHarness` on the bundle.
 * - `startRendezvousSetup()`: a rendezvous with an executor attached, a harness for it, the
 *   events it emitted and the clients a test opened, all stopped by one `stop()`.
 */
import { type Observable, firstValueFrom, switchMap, timeout } from 'rxjs';
import { ExecServerClient, type ExecServerClientOptions } from '../../src/client/index.js';
import { NoiseChannelIdentity } from '../../src/noise/index.js';
import {
  EnvironmentRegistryClient,
  type NoiseRendezvousConnectBundle,
} from '../../src/registry/index.js';
import {
  startRendezvous,
  type Rendezvous,
  type RendezvousEvent,
  type RendezvousOptions,
} from '../../src/rendezvous/index.js';
import {
  connectNoiseHarness,
  type NoiseHarnessOptions,
} from '../../src/transport/noiseHarnessTransport.js';
import type { Transport } from '../../src/transport/transport.js';

export interface RendezvousHarness {
  readonly identity: NoiseChannelIdentity;
  readonly registry: EnvironmentRegistryClient;
  /** A fresh bundle from `/connect`. */
  bundle(): Promise<NoiseRendezvousConnectBundle>;
  /** Cold: `/connect`, then the Noise handshake through the rendezvous. */
  connect(options?: NoiseHarnessOptions): Observable<Transport>;
}

export function rendezvousHarness(
  rendezvous: Rendezvous,
  environmentId: string,
  token: string,
  identity: NoiseChannelIdentity = NoiseChannelIdentity.generate(),
): RendezvousHarness {
  const registry = new EnvironmentRegistryClient({ baseUrl: rendezvous.url, bearerToken: token });
  return {
    identity,
    registry,
    bundle: () =>
      firstValueFrom(registry.connect(environmentId, identity.toJSON()).pipe(timeout(10_000))),
    connect: (options) =>
      registry
        .connect(environmentId, identity.toJSON())
        .pipe(switchMap((bundle) => connectNoiseHarness(bundle, identity, options))),
  };
}

/** The first value of `source`, or a TimeoutError after `ms`. */
export const within = <T>(source: Observable<T>, ms = 10_000): Promise<T> =>
  firstValueFrom(source.pipe(timeout(ms)));

/** The error `source` fails with (within `ms`); throws when it succeeds instead. */
export const failureOf = (source: Observable<unknown>, ms = 10_000): Promise<unknown> =>
  within(source, ms).then(
    () => {
      throw new Error('expected the call to fail');
    },
    (error: unknown) => error,
  );

/** Frames the rendezvous forwarded to the executor on `streamId`, by kind, in order. */
export function framesToExecutor(events: readonly RendezvousEvent[], streamId: string): string[] {
  return events.flatMap((event) =>
    event.type === 'frame-forwarded' && event.to === 'environment' && event.streamId === streamId
      ? [event.kind]
      : [],
  );
}

/** What `startRendezvousSetup` needs of an executor. */
export interface AttachedExecutor {
  readonly environmentId: string;
  stop(): Promise<void>;
}

export interface RendezvousSetup<E extends AttachedExecutor> {
  readonly rendezvous: Rendezvous;
  readonly executor: E;
  /** A harness for the executor's environment. */
  readonly harness: RendezvousHarness;
  /** Every event the rendezvous emitted since it started. */
  readonly events: RendezvousEvent[];
  /** Clients opened with `openClient` (closed by `stop`). */
  readonly clients: ExecServerClient[];
  /** A client session over a fresh harness stream; closed by `stop`. */
  openClient(options: ExecServerClientOptions, ms?: number): Promise<ExecServerClient>;
  /** Closes the clients, stops the executor, closes the rendezvous. */
  stop(): Promise<void>;
}

/**
 * Starts a rendezvous (events recorded from the start) and attaches an executor with
 * `attach`; if attaching fails the rendezvous is closed again.
 */
export async function startRendezvousSetup<E extends AttachedExecutor>(
  options: RendezvousOptions,
  attach: (rendezvous: Rendezvous) => Promise<E>,
): Promise<RendezvousSetup<E>> {
  const rendezvous = await startRendezvous(options);
  const events: RendezvousEvent[] = [];
  rendezvous.events.subscribe((event) => events.push(event));
  let executor: E;
  try {
    executor = await attach(rendezvous);
  } catch (error) {
    await rendezvous.close();
    throw error;
  }
  const harness = rendezvousHarness(rendezvous, executor.environmentId, rendezvous.harnessToken);
  const clients: ExecServerClient[] = [];
  return {
    rendezvous,
    executor,
    harness,
    events,
    clients,
    openClient: async (clientOptions, ms) => {
      const client = await within(
        harness
          .connect()
          .pipe(switchMap((transport) => ExecServerClient.connect(transport, clientOptions))),
        ms,
      );
      clients.push(client);
      return client;
    },
    stop: async () => {
      for (const client of clients) client.close();
      await executor.stop();
      await rendezvous.close();
    },
  };
}
