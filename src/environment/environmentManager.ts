/**
 * `EnvironmentManager` (spec/protocol.md §19): the environments of one host, by id. Ordinary
 * environments start connecting in the background; provisioned (pending Noise) ones connect
 * once provisioning reported ready and they are used.
 */
import { type Observable, of } from 'rxjs';
import { NoiseChannelIdentity } from '../noise/identity.js';
import { ProtocolError } from '../protocol/errors.js';
import type { NoiseRendezvousConnectProvider } from '../registry/index.js';
import { Environment, type EnvironmentObservedStatus } from './environment.js';
import { ProvisioningModeConflictError } from './errors.js';
import { LazyRemoteExecServerClient, type LazyRemoteClientOptions } from './lazyRemoteClient.js';
import { ProvisioningState, type ProvisioningReport, validateReadyInfo } from './provisioning.js';
import type {
  NoiseHarnessConnector,
  NoiseTransportParams,
  WebSocketTransportParams,
} from './transportParams.js';

/** One configured remote environment. */
export interface EnvironmentConfig {
  readonly id: string;
  readonly transport: WebSocketTransportParams | NoiseTransportParams;
}

/** Which environment callers get by default. */
export type EnvironmentDefault = 'disabled' | { readonly id: string };

/** The environments a provider configured. */
export interface EnvironmentProviderSnapshot {
  readonly environments: readonly EnvironmentConfig[];
  readonly default: EnvironmentDefault;
  /** Local (in-process) environments are not offered by execrx's client: must be false. */
  readonly includeLocal: boolean;
}

/** Options shared by every environment a manager creates. */
export interface EnvironmentManagerOptions {
  /** Options of every environment's lazy client. */
  readonly client?: LazyRemoteClientOptions;
  /** Harness transport for provisioned Noise environments (default: the Noise harness). */
  readonly connectHarness?: NoiseHarnessConnector;
}

/** Reserved for the host's own machine. */
export const LOCAL_ENVIRONMENT_ID = 'local';

/**
 * The environments of one host, by id, with a default; created from a provider snapshot. Closing it
 * closes every environment.
 */
export class EnvironmentManager {
  private readonly environments = new Map<string, Environment>();
  private readonly provisioning = new Map<string, ProvisioningState>();

  private constructor(
    readonly defaultEnvironment: EnvironmentDefault,
    private readonly options: EnvironmentManagerOptions,
  ) {}

  /**
   * Validates ids and the default, then starts background connects for every environment.
   * Errors (ProtocolError) on a duplicate or reserved id, a default naming no environment,
   * or `includeLocal`.
   */
  static fromSnapshot(
    snapshot: EnvironmentProviderSnapshot,
    options: EnvironmentManagerOptions = {},
  ): EnvironmentManager {
    if (snapshot.includeLocal) {
      throw new ProtocolError(
        'local environments are not supported; run an executor and configure it as a remote environment',
      );
    }
    const manager = new EnvironmentManager(snapshot.default, options);
    for (const config of snapshot.environments) {
      validateId(config.id);
      if (manager.environments.has(config.id)) {
        throw new ProtocolError(`environment \`${config.id}\` is configured twice`);
      }
      manager.environments.set(
        config.id,
        new Environment(
          config.id,
          new LazyRemoteExecServerClient(config.transport, options.client),
        ),
      );
    }
    if (snapshot.default !== 'disabled' && !manager.environments.has(snapshot.default.id)) {
      throw new ProtocolError(`default environment \`${snapshot.default.id}\` is not configured`);
    }
    for (const environment of manager.environments.values()) environment.startConnecting();
    return manager;
  }

  /** The environment with `id`, if any. */
  getEnvironment(id: string): Environment | undefined {
    return this.environments.get(id);
  }

  /** The default environment, unless defaults are disabled. */
  getDefaultEnvironment(): Environment | undefined {
    return this.defaultEnvironment === 'disabled'
      ? undefined
      : this.environments.get(this.defaultEnvironment.id);
  }

  /** Every environment id, in insertion order. */
  get environmentIds(): readonly string[] {
    return [...this.environments.keys()];
  }

  /** Replaces (or adds) a plain WebSocket environment; the old one is closed. */
  upsertEnvironment(id: string, url: string, connectTimeoutMs?: number): Environment {
    validateId(id);
    this.environments.get(id)?.close();
    this.provisioning.delete(id);
    const environment = new Environment(
      id,
      new LazyRemoteExecServerClient(
        { kind: 'websocket', url, ...(connectTimeoutMs === undefined ? {} : { connectTimeoutMs }) },
        this.options.client,
      ),
    );
    this.environments.set(id, environment);
    environment.startConnecting();
    return environment;
  }

  /**
   * The provisioned Noise environment `id` (created pending if missing): the same object on
   * every call. Errors with ProvisioningModeConflictError if `id` is an ordinary environment.
   */
  materializePendingNoiseEnvironment(
    id: string,
    provider: NoiseRendezvousConnectProvider,
  ): Environment {
    validateId(id);
    const existing = this.environments.get(id);
    if (existing !== undefined) {
      if (!this.provisioning.has(id)) throw new ProvisioningModeConflictError(id);
      return existing;
    }
    const provisioning = new ProvisioningState();
    const transport: NoiseTransportParams = {
      kind: 'noise',
      provider,
      identity: NoiseChannelIdentity.generate(),
      ...(this.options.connectHarness ? { connectHarness: this.options.connectHarness } : {}),
    };
    const environment = new Environment(
      id,
      new LazyRemoteExecServerClient(
        { kind: 'deferred', readiness$: provisioning.readiness$, transport },
        this.options.client,
      ),
      provisioning,
    );
    this.provisioning.set(id, provisioning);
    this.environments.set(id, environment);
    return environment;
  }

  /**
   * Records a provisioning report for `id` (materializing it if needed) and returns its
   * environment; an ordinary (configured) environment ignores reports and returns undefined.
   * It only updates provisioning: the connection starts when the environment is used.
   * Throws ProtocolError for a report that is refused — invalid ready info (an existing pending
   * environment fails with it; a missing one is not created), or a failure after Ready.
   */
  reportEnvironmentProvisioningStatus(
    id: string,
    report: ProvisioningReport,
    provider: NoiseRendezvousConnectProvider,
  ): Environment | undefined {
    validateId(id);
    const existing = this.environments.get(id);
    if (existing !== undefined && !this.provisioning.has(id)) return undefined;
    if (existing === undefined && 'ready' in report) {
      const invalid = validateReadyInfo(report.ready);
      if (invalid !== undefined) throw new ProtocolError(invalid);
    }
    const environment = this.materializePendingNoiseEnvironment(id, provider);
    this.provisioning.get(id)?.report(id, report);
    return environment;
  }

  /** `Environment.status()` of `id`; an unknown id is `disconnected`. */
  getEnvironmentStatus(id: string): Observable<EnvironmentObservedStatus> {
    const environment = this.environments.get(id);
    if (environment === undefined) {
      return of({ status: 'disconnected', error: `unknown environment \`${id}\`` });
    }
    return environment.status();
  }

  /** Closes every environment. */
  close(): void {
    for (const environment of this.environments.values()) environment.close();
    this.environments.clear();
    this.provisioning.clear();
  }
}

function validateId(id: string): void {
  if (id.trim() === '') throw new ProtocolError('environment id must not be empty');
  if (id === LOCAL_ENVIRONMENT_ID) {
    throw new ProtocolError('environment id `local` is reserved for the local environment');
  }
}
