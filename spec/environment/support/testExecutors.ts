/**
 * Executors for the lifecycle specs (the seed's `Executor::start`), each on its own 127.0.0.1
 * port with its own identity and registration id, and a harness connector that records the
 * transports it opened so a spec can drop one (the seed's `disconnect`).
 */
import { randomUUID } from 'node:crypto';
import { Observable, tap } from 'rxjs';
import { NoiseChannelIdentity } from '../../../src/noise/index.js';
import type { NoiseRendezvousConnectBundle } from '../../../src/registry/index.js';
import { startExecServer } from '../../../src/server/index.js';
import type { Transport } from '../../../src/transport/transport.js';
import { connectWebSocket } from '../../../src/transport/webSocketTransport.js';
import type { NoiseHarnessConnector } from '../../../src/environment/index.js';
import type { Target } from './testRegistry.js';

/** The seed's `Validator`: admits every harness key, optionally stalling the handshake. */
export class ControlledValidator {
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

  /** Waits (if stalling), then admits. */
  admit(): Observable<boolean> {
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
  close(): Promise<void>;
}

const executors = new Set<TestExecutor>();

/** Starts an executor; `validator` stalls or admits its handshakes. */
export async function startTestExecutor(
  validator: ControlledValidator = new ControlledValidator(false),
): Promise<TestExecutor> {
  const server = await startExecServer({ listen: 'ws://127.0.0.1:0' });
  const target: Target = {
    url: server.url,
    identity: NoiseChannelIdentity.generate(),
    registration: randomUUID(),
  };
  validators.set(server.url, validator);
  const executor: TestExecutor = {
    target,
    close: async () => {
      executors.delete(executor);
      validators.delete(server.url);
      await server.close();
    },
  };
  executors.add(executor);
  return executor;
}

const validators = new Map<string, ControlledValidator>();

/** Stops every executor still running (afterEach). */
export async function closeAllExecutors(): Promise<void> {
  await Promise.all([...executors].map((executor) => executor.close()));
}

/** Opens harness transports and remembers them, newest last. */
export class RecordingHarness {
  readonly transports: Transport[] = [];

  readonly connect: NoiseHarnessConnector = (bundle: NoiseRendezvousConnectBundle) => {
    const validator = validators.get(bundle.websocketUrl);
    return connectWebSocket(bundle.websocketUrl).pipe(
      (source) =>
        new Observable<Transport>((subscriber) => {
          const admitted = (validator ?? new ControlledValidator(false)).admit();
          return source.subscribe({
            next: (transport) => {
              const sub = admitted.subscribe(() => subscriber.next(transport));
              subscriber.add(() => {
                if (!sub.closed) transport.close();
                sub.unsubscribe();
              });
              sub.add(() => subscriber.complete());
            },
            error: (error: unknown) => subscriber.error(error),
          });
        }),
      tap((transport) => this.transports.push(transport)),
    );
  };

  /** Closes the newest transport (the seed's `disconnect(client)`). */
  dropLatest(): void {
    const transport = this.transports.at(-1);
    if (transport === undefined) throw new Error('no harness transport was opened');
    transport.close();
  }
}
