/**
 * An in-test registry (the seed's `Registry`): it points at one executor target, and its next
 * lookup can be blocked until the test releases it (or fails it, like dropping the sender).
 */
import { Observable, of } from 'rxjs';
import { NoiseChannelIdentity } from '../../../src/noise/index.js';
import type { NoiseChannelPublicKeyJson } from '../../../src/noise/index.js';
import { ProtocolError } from '../../../src/protocol/errors.js';
import type {
  NoiseRendezvousConnectBundle,
  NoiseRendezvousConnectProvider,
} from '../../../src/registry/index.js';

/** Where the registry sends harnesses: URL, executor identity and registration id. */
export interface Target {
  readonly url: string;
  readonly identity: NoiseChannelIdentity;
  readonly registration: string;
}

/** A blocked lookup: `started` resolves once a lookup waits on it. */
export interface LookupGate {
  readonly started: Promise<void>;
  /** True once the waiting lookup was unsubscribed (its caller was superseded). */
  readonly abandoned: boolean;
  release(): void;
  /** Ends the lookup with ProtocolError("test lookup failed"). */
  fail(): void;
}

interface GateState {
  settled?: 'release' | 'fail';
  waiter?: { resolve(): void; reject(): void };
  abandoned: boolean;
  markStarted(): void;
}

export class TestRegistry implements NoiseRendezvousConnectProvider {
  lookups = 0;
  private nextGate: GateState | undefined;

  constructor(public target: Target) {}

  blockNextLookup(): LookupGate {
    let markStarted!: () => void;
    const started = new Promise<void>((resolve) => (markStarted = resolve));
    const state: GateState = { abandoned: false, markStarted };
    this.nextGate = state;
    return {
      started,
      get abandoned() {
        return state.abandoned;
      },
      release: () => settle(state, 'release'),
      fail: () => settle(state, 'fail'),
    };
  }

  connectBundle(_harnessKey: NoiseChannelPublicKeyJson): Observable<NoiseRendezvousConnectBundle> {
    this.lookups += 1;
    const bundle = toBundle(this.target);
    const gate = this.nextGate;
    this.nextGate = undefined;
    if (gate === undefined) return of(bundle);
    return new Observable<NoiseRendezvousConnectBundle>((subscriber) => {
      let done = false;
      const finish = (outcome: 'release' | 'fail') => {
        done = true;
        if (outcome === 'release') {
          subscriber.next(bundle);
          subscriber.complete();
        } else subscriber.error(new ProtocolError('test lookup failed'));
      };
      if (gate.settled !== undefined) finish(gate.settled);
      else
        gate.waiter = {
          resolve: () => finish('release'),
          reject: () => finish('fail'),
        };
      gate.markStarted();
      return () => {
        if (!done) gate.abandoned = true;
        gate.waiter = undefined;
      };
    });
  }
}

function settle(state: GateState, outcome: 'release' | 'fail'): void {
  if (state.settled !== undefined) return;
  state.settled = outcome;
  if (outcome === 'release') state.waiter?.resolve();
  else state.waiter?.reject();
}

export function toBundle(target: Target): NoiseRendezvousConnectBundle {
  return {
    websocketUrl: target.url,
    environmentId: 'environment',
    executorRegistrationId: target.registration,
    executorPublicKey: target.identity.publicKey().toJSON(),
    harnessKeyAuthorization: 'authorization',
  };
}
