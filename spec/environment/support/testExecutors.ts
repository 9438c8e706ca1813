/**
 * Executors for the lifecycle specs (the seed's `Executor::start`): our executor in direct
 * Noise mode, each on its own 127.0.0.1 port with its own identity and registration id, and a
 * harness connector that records the transports it opened so a spec can drop one (the seed's
 * `disconnect`).
 */
import { Observable, tap } from 'rxjs';
import type { NoiseChannelIdentity, NoiseChannelPublicKey } from '../../../src/noise/index.js';
import type { NoiseRendezvousConnectBundle } from '../../../src/registry/index.js';
import {
  startDirectNoiseExecServer,
  type DirectNoiseExecServer,
  type DirectNoiseExecServerOptions,
  type HarnessKeyValidator,
} from '../../../src/server/relay/index.js';
import {
  connectNoiseHarness,
  type NoiseHarnessOptions,
} from '../../../src/transport/noiseHarnessTransport.js';
import type { Transport } from '../../../src/transport/transport.js';
import type { NoiseHarnessConnector } from '../../../src/environment/index.js';
import type { Target } from './testRegistry.js';

/** The seed's `Validator`: admits every harness key, optionally stalling the handshake. */
export class ControlledValidator implements HarnessKeyValidator {
  private markStarted!: () => void;
  private releaseHandshake!: () => void;
  /** Resolves when a handshake reached validation. */
  readonly started = new Promise<void>((resolve) => (this.markStarted = resolve));
  private readonly released = new Promise<void>((resolve) => (this.releaseHandshake = resolve));

  constructor(readonly stallHandshake: boolean) {}

  /** Lets the stalled handshake continue. */
  release(): void {
    this.releaseHandshake();
  }

  validateHarnessKey(
    _harnessKey: NoiseChannelPublicKey,
    _authorization: string,
    _streamId: string,
  ): Observable<boolean> {
    return new Observable<boolean>((subscriber) => {
      if (!this.stallHandshake) {
        subscriber.next(true);
        subscriber.complete();
        return undefined;
      }
      this.markStarted();
      let active = true;
      void this.released.then(() => {
        if (!active) return;
        subscriber.next(true);
        subscriber.complete();
      });
      return () => {
        active = false;
      };
    });
  }
}

export interface TestExecutor {
  readonly target: Target;
  readonly server: DirectNoiseExecServer;
  close(): Promise<void>;
}

const executors = new Set<TestExecutor>();

/** Starts our executor in direct Noise mode; `validator` stalls or admits its handshakes. */
export async function startTestExecutor(
  validator: HarnessKeyValidator = new ControlledValidator(false),
  options: Omit<DirectNoiseExecServerOptions, 'listen' | 'validator'> = {},
): Promise<TestExecutor> {
  const server = await startDirectNoiseExecServer({
    ...options,
    listen: 'ws://127.0.0.1:0',
    validator,
  });
  const target: Target = {
    url: server.url,
    identity: server.identity,
    registration: server.registrationId,
  };
  const executor: TestExecutor = {
    target,
    server,
    close: async () => {
      executors.delete(executor);
      await server.close();
    },
  };
  executors.add(executor);
  return executor;
}

/** Stops every executor still running (afterEach). */
export async function closeAllExecutors(): Promise<void> {
  await Promise.all([...executors].map((executor) => executor.close()));
}

/** Opens Noise harness transports and remembers them, newest last. */
export class RecordingHarness {
  readonly transports: Transport[] = [];

  constructor(private readonly options: NoiseHarnessOptions = {}) {}

  readonly connect: NoiseHarnessConnector = (
    bundle: NoiseRendezvousConnectBundle,
    identity: NoiseChannelIdentity,
  ) =>
    connectNoiseHarness(bundle, identity, this.options).pipe(
      tap((transport) => this.transports.push(transport)),
    );

  /** Closes the newest transport (the seed's `disconnect(client)`). */
  dropLatest(): void {
    const transport = this.transports.at(-1);
    if (transport === undefined) throw new Error('no harness transport was opened');
    transport.close();
  }
}
