/**
 * `Environment` (spec/protocol.md §19): a remote execution environment behind one lazy,
 * self-recovering client. Its filesystem, process and HTTP backends are stable objects that
 * follow the current session, including across `refreshConnection()`.
 */
import type {
  CapabilityRootRequest,
  EnvironmentConfigReadOptions,
} from '../client/sessionCalls.js';
import type { CapabilityRootsDiscoverV1Result } from '../protocol/capabilities.js';
import type { EnvironmentConfigReadResult } from '../protocol/environment.js';
import { type Observable, type Subscription, catchError, map, of, switchMap } from 'rxjs';
import type { ExecServerClient } from '../client/execServerClient.js';
import type { EnvironmentInfo } from '../protocol/environment.js';
import { EnvironmentHttpClient, EnvironmentProcessBackend } from './environmentBackends.js';
import { EnvironmentFileSystem } from './environmentFileSystem.js';
import type { LazyRemoteExecServerClient, ReadinessResult } from './lazyRemoteClient.js';
import type { EnvironmentConnectionState } from './managedSession.js';
import type { ConnectionStatus } from './connectionStatus.js';
import type { EnvironmentReadyInfo, ProvisioningState } from './provisioning.js';

/** What `status()` observed right now. */
export type EnvironmentObservedStatus =
  | { readonly status: 'ready' }
  | { readonly status: 'pending' }
  | { readonly status: 'disconnected'; readonly error: string };

/**
 * A remote execution environment: one lazy, self-recovering client, with filesystem, process and
 * HTTP backends that follow the current session across recovery and refresh.
 */
export class Environment {
  private readonly filesystem: EnvironmentFileSystem;
  private readonly processes: EnvironmentProcessBackend;
  private readonly http: EnvironmentHttpClient;
  private startup: Subscription | undefined;

  /** @internal Created by EnvironmentManager. */
  constructor(
    readonly id: string,
    readonly client: LazyRemoteExecServerClient,
    private readonly provisioning?: ProvisioningState,
  ) {
    const session = (): Observable<ExecServerClient> => this.client.get();
    this.filesystem = new EnvironmentFileSystem(session);
    this.processes = new EnvironmentProcessBackend(session);
    this.http = new EnvironmentHttpClient(session);
  }

  /** True for a provisioned environment (connects once provisioning reports ready). */
  get isProvisioned(): boolean {
    return this.provisioning !== undefined;
  }

  /** `environment/info` of the current session (cached per session; connects first). */
  info(): Observable<EnvironmentInfo> {
    return this.client.get().pipe(switchMap((client) => client.environmentInfo()));
  }

  /** `environment/info` asked again, never from the session's cache (connects first). */
  forceInfo(): Observable<EnvironmentInfo> {
    return this.client.get().pipe(switchMap((client) => client.forceEnvironmentInfo()));
  }

  /** `environmentConfig/read` on the current session (connects first). */
  readEnvironmentConfig(
    options: EnvironmentConfigReadOptions,
  ): Observable<EnvironmentConfigReadResult> {
    return this.client.get().pipe(switchMap((client) => client.readEnvironmentConfig(options)));
  }

  /**
   * `capabilityRoots/discoverV1` on the current session (connects first); replayed once when
   * the session recovers within 8 s of a transport loss (ExecServerClient.discoverCapabilityRoots).
   */
  discoverCapabilityRoots(
    roots: readonly CapabilityRootRequest[],
  ): Observable<CapabilityRootsDiscoverV1Result> {
    return this.client.get().pipe(switchMap((client) => client.discoverCapabilityRoots(roots)));
  }

  /** The environment's filesystem: the same object for the environment's lifetime. */
  getFilesystem(): EnvironmentFileSystem {
    return this.filesystem;
  }

  /** A filesystem that only uses a live session: never connects, waits or recovers. */
  getFilesystemWithoutReconnect(): EnvironmentFileSystem {
    return new EnvironmentFileSystem(() => this.client.getFailFast());
  }

  /** Starts processes on the current session. */
  getExecBackend(): EnvironmentProcessBackend {
    return this.processes;
  }

  /** Sends HTTP requests from the executor host. */
  getHttpClient(): EnvironmentHttpClient {
    return this.http;
  }

  /** `Connected` while a live session is installed; replays the current value, then changes. */
  get connectionState$(): Observable<EnvironmentConnectionState> {
    return this.client.connectionState$;
  }

  /** What the connection is doing, for a user interface (`LazyRemoteExecServerClient.status$`). */
  get status$(): Observable<ConnectionStatus> {
    return this.client.status$;
  }

  get connectionState(): EnvironmentConnectionState {
    return this.client.connectionState;
  }

  /** The executor registration the current session runs under (Noise only). */
  get executorRegistrationId(): string | undefined {
    return this.client.executorRegistrationId;
  }

  /** Planned executor replacement; see `LazyRemoteExecServerClient.refreshConnection`. */
  refreshConnection(): Observable<void> {
    return this.client.refreshConnection();
  }

  /** Starts connecting in the background (idempotent; provisioned ones wait for readiness). */
  startConnecting(): void {
    if (this.startup !== undefined) return;
    this.startup = this.client.waitUntilReady().subscribe({ error: () => undefined });
  }

  get startupFinished(): boolean {
    return this.client.startupFinished;
  }

  get readinessResult(): ReadinessResult | undefined {
    return this.client.readinessResult;
  }

  /** Waits for the first connection. */
  waitUntilReady(): Observable<void> {
    return this.client.waitUntilReady();
  }

  /** The last ready report of a provisioned environment. */
  get lastReadyInfo(): EnvironmentReadyInfo | undefined {
    return this.provisioning?.lastReadyInfo;
  }

  /**
   * A live observation: a failed provisioning or session is `disconnected`, a startup that
   * has not finished `pending`, otherwise the result of a live `environment/status` probe.
   * Never starts, waits for or recovers a connection.
   */
  status(): Observable<EnvironmentObservedStatus> {
    const readiness = this.provisioning?.current;
    if (readiness !== undefined && !readiness.ok) {
      return of({ status: 'disconnected', error: `environment unavailable: ${readiness.error}` });
    }
    if (!this.client.startupFinished) return of({ status: 'pending' });
    return this.client.getFailFast().pipe(
      switchMap((client) => client.environmentStatus()),
      map((): EnvironmentObservedStatus => ({ status: 'ready' })),
      catchError((error: unknown) =>
        of<EnvironmentObservedStatus>({
          status: 'disconnected',
          error: error instanceof Error ? error.message : String(error),
        }),
      ),
    );
  }

  /** Stops background work and closes the session. */
  close(): void {
    this.startup?.unsubscribe();
    this.client.close();
    this.provisioning?.close();
  }
}
