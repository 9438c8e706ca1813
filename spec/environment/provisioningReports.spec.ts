/**
 * Provisioning reports with the Rust client's results and errors
 * (src/environment/provisioning.ts, EnvironmentManager.reportEnvironmentProvisioningStatus):
 * an ordinary environment ignores them, a refused report is an error the caller sees.
 * No connection is made: reports only update provisioning.
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import { firstValueFrom } from 'rxjs';
import { EnvironmentManager, webSocketUrl } from '../../src/environment/index.js';
import { ProvisioningState } from '../../src/environment/provisioning.js';
import { ProtocolError } from '../../src/protocol/errors.js';
import { TestRegistry } from './support/testRegistry.js';

const managers: EnvironmentManager[] = [];
afterEach(() => {
  for (const manager of managers.splice(0)) manager.close();
});

const registry = new TestRegistry({} as never);
const READY = { ready: { selectedCapabilityRoots: [{ id: 'root', path: '/tmp' }] } };
const INVALID = { ready: { selectedCapabilityRoots: [{ id: '', path: '/tmp' }] } };

function manager(): EnvironmentManager {
  const created = EnvironmentManager.fromSnapshot({
    // A port nobody listens on: the ordinary environment never connects (nor needs to).
    environments: [{ id: 'ordinary', transport: webSocketUrl('ws://127.0.0.1:9') }],
    default: 'disabled',
    includeLocal: false,
  });
  managers.push(created);
  return created;
}

describe('reportEnvironmentProvisioningStatus', () => {
  it('an ordinary environment ignores reports and returns nothing', () => {
    const environments = manager();
    expect(
      environments.reportEnvironmentProvisioningStatus('ordinary', READY, registry),
    ).toBeUndefined();
    expect(
      environments.reportEnvironmentProvisioningStatus('ordinary', { error: 'x' }, registry),
    ).toBeUndefined();
  });

  it('a failure after Ready is an error naming both; Ready stays', async () => {
    const environments = manager();
    const environment = environments.reportEnvironmentProvisioningStatus('p', READY, registry);
    expect(environment).toBe(environments.getEnvironment('p'));
    expect(() =>
      environments.reportEnvironmentProvisioningStatus('p', { error: 'disk full' }, registry),
    ).toThrow(
      new ProtocolError(
        'environment `p` is already ready, but a later provisioning report failed: disk full',
      ),
    );
    expect(environment!.lastReadyInfo).toEqual(READY.ready);
  });

  it('invalid ready info fails a pending environment and is an error; a missing one is not created', async () => {
    const environments = manager();
    expect(() =>
      environments.reportEnvironmentProvisioningStatus('new', INVALID, registry),
    ).toThrow(ProtocolError);
    expect(environments.getEnvironment('new')).toBeUndefined();
    const pending = environments.materializePendingNoiseEnvironment('pending', registry);
    expect(() =>
      environments.reportEnvironmentProvisioningStatus('pending', INVALID, registry),
    ).toThrow('environment selected an empty or duplicate capability root id ``');
    expect(await firstValueFrom(pending.status())).toEqual({
      status: 'disconnected',
      error:
        'environment unavailable: environment selected an empty or duplicate capability root id ``',
    });
  });
});

describe('ProvisioningState', () => {
  it('keeps the first failure, recovers on Ready, and repeats nothing on a second Ready', () => {
    const state = new ProvisioningState();
    const seen: unknown[] = [];
    state.readiness$.subscribe((value) => seen.push(value));
    state.report('p', { error: 'first' });
    state.report('p', { error: 'second' });
    state.report('p', READY);
    state.report('p', READY);
    expect(seen).toEqual([undefined, { ok: false, error: 'first' }, { ok: true }]);
  });
});
