/**
 * Test helpers for the Noise path, mirroring the seed's `Executor`, `Registry` and `Validator`
 * (shared/seed/client_refresh_tests.rs):
 *
 * - `startNoiseExecServer()`: our executor in direct-Noise mode on 127.0.0.1 (the seed's
 *   `Executor::start`), with `bundle()` for a harness and `target` for a provider.
 * - `TestRendezvousProvider`: a `NoiseRendezvousConnectProvider` whose target can be swapped
 *   and whose next lookup can be blocked (`blockNextLookup()`, `lookupStarted`).
 * - `TestHarnessKeyValidator`: admits every key; with `stallHandshake` each validation waits
 *   for `releaseHandshake()` and announces itself on `started` first.
 * - `Notify`: tokio's `Notify` (one stored permit), which the seed's tests are written with.
 */
import { Observable, of } from 'rxjs';
import { NoiseChannelIdentity, type NoiseChannelPublicKeyJson } from '../../src/noise/index.js';
import { ProtocolError } from '../../src/protocol/errors.js';
import type {
  NoiseRendezvousConnectBundle,
  NoiseRendezvousConnectProvider,
} from '../../src/registry/index.js';
import type { Executor } from '../../src/server/index.js';
import {
  startDirectNoiseExecServer,
  type DirectNoiseExecServer,
  type DirectNoiseExecServerOptions,
  type HarnessKeyValidator,
} from '../../src/server/relay/index.js';

/** What a registry lookup would name: where the executor is and who it is (seed `Target`). */
export interface NoiseTarget {
  readonly url: string;
  readonly identity: NoiseChannelIdentity;
  readonly registrationId: string;
  readonly environmentId: string;
}

/** The bundle a registry would hand out for `target`. */
export function bundleFor(
  target: NoiseTarget,
  authorization = 'authorization',
): NoiseRendezvousConnectBundle {
  return {
    websocketUrl: target.url,
    environmentId: target.environmentId,
    executorRegistrationId: target.registrationId,
    executorPublicKey: target.identity.toJSON(),
    harnessKeyAuthorization: authorization,
  };
}

export interface RunningNoiseExecServer extends NoiseTarget {
  /** A fresh single-use bundle for this executor. */
  bundle(authorization?: string): NoiseRendezvousConnectBundle;
  /** Snapshot of url/identity/registration, for a provider's target. */
  readonly target: NoiseTarget;
  readonly executor: Executor;
  readonly server: DirectNoiseExecServer;
  stop(): Promise<void>;
}

/** Starts our executor in direct-Noise mode on an ephemeral loopback port. */
export async function startNoiseExecServer(
  options: Omit<DirectNoiseExecServerOptions, 'listen'> = {},
): Promise<RunningNoiseExecServer> {
  const server = await startDirectNoiseExecServer({ ...options, listen: 'ws://127.0.0.1:0' });
  const target: NoiseTarget = {
    url: server.url,
    identity: server.identity,
    registrationId: server.registrationId,
    environmentId: server.environmentId,
  };
  return {
    ...target,
    target,
    executor: server.executor,
    server,
    bundle: (authorization) => bundleFor(target, authorization),
    stop: () => server.close(),
  };
}

/** tokio's `Notify`: `notifyOne()` wakes one waiter or stores one permit for the next. */
export class Notify {
  private readonly waiters: Array<() => void> = [];
  private permit = false;

  notifyOne(): void {
    const waiter = this.waiters.shift();
    if (waiter) waiter();
    else this.permit = true;
  }

  notified(): Promise<void> {
    return this.wait().promise;
  }

  /** A cancellable wait: a cancelled waiter never consumes a notification (like a dropped future). */
  wait(): { promise: Promise<void>; cancel(): void } {
    if (this.permit) {
      this.permit = false;
      return { promise: Promise.resolve(), cancel: () => undefined };
    }
    let waiter!: () => void;
    const promise = new Promise<void>((resolve) => (waiter = resolve));
    this.waiters.push(waiter);
    return {
      promise,
      cancel: () => {
        const index = this.waiters.indexOf(waiter);
        if (index !== -1) this.waiters.splice(index, 1);
      },
    };
  }
}

/** Controls one blocked lookup (the seed's oneshot sender). */
export interface BlockedLookup {
  /** Lets the lookup finish with the target current at release time. */
  release(): void;
  /** Fails the lookup ("test lookup failed"), like dropping the seed's sender. */
  fail(error?: Error): void;
}

/** The seed's `Registry`: a scripted provider whose target can be swapped. */
export class TestRendezvousProvider implements NoiseRendezvousConnectProvider {
  /** Announced when a blocked lookup starts waiting (seed `lookup_started`). */
  readonly lookupStarted = new Notify();
  /** Every harness key a lookup was made for, in order. */
  readonly lookups: NoiseChannelPublicKeyJson[] = [];
  private nextBlock: Promise<void> | undefined;

  constructor(
    public target: NoiseTarget,
    public authorization = 'authorization',
  ) {}

  /** The next lookup waits until the returned handle is released or failed. */
  blockNextLookup(): BlockedLookup {
    let release!: () => void;
    let fail!: (error: Error) => void;
    const block = new Promise<void>((resolve, reject) => {
      release = resolve;
      fail = reject;
    });
    block.catch(() => undefined); // a block nobody waits on must not be an unhandled rejection
    this.nextBlock = block;
    return {
      release: () => release(),
      fail: (error) => fail(error ?? new ProtocolError('test lookup failed')),
    };
  }

  connectBundle(
    harnessPublicKey: NoiseChannelPublicKeyJson,
  ): Observable<NoiseRendezvousConnectBundle> {
    return new Observable<NoiseRendezvousConnectBundle>((subscriber) => {
      this.lookups.push(harnessPublicKey);
      const block = this.nextBlock;
      this.nextBlock = undefined;
      if (block === undefined) {
        subscriber.next(bundleFor(this.target, this.authorization));
        subscriber.complete();
        return undefined;
      }
      let cancelled = false;
      this.lookupStarted.notifyOne();
      block.then(
        () => {
          if (cancelled) return;
          subscriber.next(bundleFor(this.target, this.authorization));
          subscriber.complete();
        },
        (error: unknown) => {
          if (!cancelled) subscriber.error(error);
        },
      );
      return () => {
        cancelled = true;
      };
    });
  }
}

/** The seed's `Validator`: admits everyone; optionally stalls each handshake until released. */
export class TestHarnessKeyValidator implements HarnessKeyValidator {
  /** Announced when a stalled validation starts waiting (seed `started`). */
  readonly started = new Notify();
  /** Released by `releaseHandshake()` (seed `handshake.notify_one()`). */
  readonly handshake = new Notify();
  /** Stream ids of every validation, in order. */
  readonly calls: string[] = [];

  constructor(private readonly options: { stallHandshake?: boolean; admit?: boolean } = {}) {}

  /** Lets one stalled validation (current or next) finish. */
  releaseHandshake(): void {
    this.handshake.notifyOne();
  }

  validateHarnessKey(_key: unknown, _authorization: string, streamId: string): Observable<boolean> {
    this.calls.push(streamId);
    const admit = this.options.admit ?? true;
    if (!this.options.stallHandshake) return of(admit);
    return new Observable<boolean>((subscriber) => {
      this.started.notifyOne();
      const wait = this.handshake.wait();
      void wait.promise.then(() => {
        subscriber.next(admit);
        subscriber.complete();
      });
      return () => wait.cancel();
    });
  }
}

/** Convenience: a provider already pointing at `server`. */
export function providerFor(server: RunningNoiseExecServer): TestRendezvousProvider {
  return new TestRendezvousProvider(server.target);
}
