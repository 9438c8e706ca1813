/**
 * An environment that is never reconnected (spec/protocol.md §12.1–12.2, §13.4): a stdio
 * executor the client spawns (`program args`), or the local executor inside this process.
 * It stays lazy: the first use connects, once; that attempt's outcome is remembered (a failed
 * spawn or handshake fails every later call with the same error, as the Rust client's
 * `terminal_stdio_startup_failure_is_remembered`), and a session that ends stays ended.
 * Guarded by spec/environment/singleSessionEnvironment.spec.ts.
 */
import type {
  CapabilityRootRequest,
  EnvironmentConfigReadOptions,
} from '../client/sessionCalls.js';
import type { CapabilityRootsDiscoverV1Result } from '../protocol/capabilities.js';
import type { EnvironmentConfigReadResult } from '../protocol/environment.js';
import {
  defer,
  map,
  of,
  ReplaySubject,
  switchMap,
  take,
  throwError,
  catchError,
  type Observable,
  type Subscription,
} from 'rxjs';
import { ExecServerClient } from '../client/execServerClient.js';
import type { EnvironmentInfo } from '../protocol/environment.js';
import { DisconnectedError } from '../protocol/errors.js';
import { errorMessage } from '../transport/errorMessage.js';
import { spawnStdioTransport, type SpawnedStdioTransport } from '../transport/stdioTransport.js';
import type { Transport } from '../transport/transport.js';
import { ENVIRONMENT_CLIENT_NAME, INITIALIZE_TIMEOUT_MS } from './constants.js';
import type { EnvironmentObservedStatus } from './environment.js';
import { EnvironmentHttpClient, EnvironmentProcessBackend } from './environmentBackends.js';
import { EnvironmentFileSystem } from './environmentFileSystem.js';
import { ConnectionAttemptError } from './errors.js';
import type { StdioCommandParams } from './environmentsToml.js';

type SessionState =
  | { readonly kind: 'idle' }
  | { readonly kind: 'connecting'; readonly attempt: Subscription }
  | { readonly kind: 'connected'; readonly client: ExecServerClient }
  | { readonly kind: 'failed'; readonly error: ConnectionAttemptError }
  | { readonly kind: 'closed' };

/**
 * An environment with one session and no recovery: a stdio command or the local executor. Its
 * session is opened on first use; when it ends the environment reports the error and does not
 * reconnect.
 */
export class SingleSessionEnvironment {
  private state: SessionState = { kind: 'idle' };
  private readonly outcome = new ReplaySubject<ExecServerClient>(1);
  private readonly filesystem: EnvironmentFileSystem;
  private readonly processes: EnvironmentProcessBackend;
  private readonly http: EnvironmentHttpClient;

  /**
   * @param open opens and initializes the one session (cold); `kind` says what it reaches.
   * @param onClose releases what the environment owns besides the session.
   */
  constructor(
    readonly id: string,
    readonly kind: 'stdio' | 'local',
    private readonly open: () => Observable<ExecServerClient>,
    private readonly onClose: () => void = () => undefined,
  ) {
    const session = (): Observable<ExecServerClient> => this.get();
    this.filesystem = new EnvironmentFileSystem(session);
    this.processes = new EnvironmentProcessBackend(session);
    this.http = new EnvironmentHttpClient(session);
  }

  /** Never provisioned. */
  get isProvisioned(): boolean {
    return false;
  }

  /**
   * The session: connects on first use; every caller joins the same attempt. A failed attempt
   * errors with the same ConnectionAttemptError for every caller, now and later.
   */
  get(): Observable<ExecServerClient> {
    return defer(() => {
      if (this.state.kind === 'closed') {
        return throwError(() => new DisconnectedError(`environment \`${this.id}\` is closed`));
      }
      if (this.state.kind === 'idle') this.connect();
      return this.outcome.pipe(take(1));
    });
  }

  /** The session if it is connected and live now; never connects or waits. */
  getFailFast(): Observable<ExecServerClient> {
    return defer(() => {
      const state = this.state;
      if (state.kind === 'failed') return throwError(() => state.error);
      if (state.kind !== 'connected') {
        return throwError(() => new DisconnectedError('exec-server environment is not ready'));
      }
      if (state.client.state === 'connected') return of(state.client);
      return throwError(
        () =>
          state.client.failure ?? new DisconnectedError('exec-server environment is not connected'),
      );
    });
  }

  /** `environment/info` of the session (cached per session; connects first). */
  info(): Observable<EnvironmentInfo> {
    return this.get().pipe(switchMap((client) => client.environmentInfo()));
  }

  /** `environment/info` asked again, never from the session's cache (connects first). */
  forceInfo(): Observable<EnvironmentInfo> {
    return this.get().pipe(switchMap((client) => client.forceEnvironmentInfo()));
  }

  /** `environmentConfig/read` on the current session (connects first). */
  readEnvironmentConfig(
    options: EnvironmentConfigReadOptions,
  ): Observable<EnvironmentConfigReadResult> {
    return this.get().pipe(switchMap((client) => client.readEnvironmentConfig(options)));
  }

  /**
   * `capabilityRoots/discoverV1` on the current session (connects first); replayed once when
   * the session recovers within 8 s of a transport loss (ExecServerClient.discoverCapabilityRoots).
   */
  discoverCapabilityRoots(
    roots: readonly CapabilityRootRequest[],
  ): Observable<CapabilityRootsDiscoverV1Result> {
    return this.get().pipe(switchMap((client) => client.discoverCapabilityRoots(roots)));
  }

  /** {@inheritDoc Environment.getFilesystem} */
  getFilesystem(): EnvironmentFileSystem {
    return this.filesystem;
  }

  /** {@inheritDoc Environment.getFilesystemWithoutReconnect} */
  getFilesystemWithoutReconnect(): EnvironmentFileSystem {
    return new EnvironmentFileSystem(() => this.getFailFast());
  }

  /** {@inheritDoc Environment.getExecBackend} */
  getExecBackend(): EnvironmentProcessBackend {
    return this.processes;
  }

  /** {@inheritDoc Environment.getHttpClient} */
  getHttpClient(): EnvironmentHttpClient {
    return this.http;
  }

  /** Connects (once) and completes, or errors with the attempt's error. */
  waitUntilReady(): Observable<void> {
    return this.get().pipe(map(() => undefined));
  }

  /** Stays lazy: a stdio executor is spawned on first use only (as upstream). */
  startConnecting(): void {}

  get startupFinished(): boolean {
    return this.state.kind === 'connected' || this.state.kind === 'failed';
  }

  /**
   * Never starts or waits for a connection: `pending` before the first use, `disconnected`
   * after a failed attempt or a lost session, else a live `environment/status` probe.
   */
  status(): Observable<EnvironmentObservedStatus> {
    if (this.state.kind === 'idle' || this.state.kind === 'connecting') {
      return of({ status: 'pending' });
    }
    return this.getFailFast().pipe(
      switchMap((client) => client.environmentStatus()),
      map((): EnvironmentObservedStatus => ({ status: 'ready' })),
      catchError((error: unknown) =>
        of<EnvironmentObservedStatus>({
          status: 'disconnected',
          error: errorMessage(error),
        }),
      ),
    );
  }

  /** Ends the session (a stdio child is terminated) and fails later calls. */
  close(): void {
    const state = this.state;
    this.state = { kind: 'closed' };
    if (state.kind === 'connecting') state.attempt.unsubscribe();
    if (state.kind === 'connected') state.client.close();
    if (state.kind !== 'failed' && state.kind !== 'connected') {
      this.outcome.error(new DisconnectedError(`environment \`${this.id}\` is closed`));
    }
    this.onClose();
  }

  private connect(): void {
    let settled = false;
    const attempt = this.open()
      .pipe(take(1))
      .subscribe({
        next: (client) => {
          settled = true;
          this.state = { kind: 'connected', client };
          this.outcome.next(client);
        },
        error: (error: unknown) => {
          settled = true;
          const failure = new ConnectionAttemptError(error);
          this.state = { kind: 'failed', error: failure };
          this.outcome.error(failure);
        },
        complete: () => {
          if (settled) return;
          const failure = new ConnectionAttemptError(
            new DisconnectedError('exec-server closed before the session was initialized'),
          );
          this.state = { kind: 'failed', error: failure };
          this.outcome.error(failure);
        },
      });
    if (!settled) this.state = { kind: 'connecting', attempt };
  }
}

/**
 * A stdio-command environment: spawns `program args` (with our environment plus `env`, in
 * `cwd`) on first use and initializes a session on its stdio as `codex-environment`.
 * The child's stderr is passed to `onStderr` when given, else discarded.
 */
export function stdioCommandEnvironment(
  id: string,
  command: StdioCommandParams,
  onStderr?: (text: string) => void,
): SingleSessionEnvironment {
  return new SingleSessionEnvironment(id, 'stdio', () =>
    spawnStdioCommand(command, onStderr).pipe(
      switchMap((transport) => initializeOn(transport, command.initializeTimeoutMs)),
    ),
  );
}

/**
 * Spawns the stdio executor `command` names (our environment plus `env`, in `cwd`); cold, one
 * child per subscription (spawnStdioTransport). Stderr goes to `onStderr`, else is discarded.
 */
export function spawnStdioCommand(
  command: StdioCommandParams,
  onStderr?: (text: string) => void,
): Observable<SpawnedStdioTransport> {
  return spawnStdioTransport(command.program, command.args, {
    env: { ...process.env, ...command.env },
    ...(command.cwd === undefined ? {} : { cwd: command.cwd }),
    ...(onStderr === undefined ? {} : { onStderr }),
  });
}

/** Opens transports to an executor in this process (`startLocalExecutor()` of execrx/server). */
export interface LocalExecutorConnector {
  /** A new transport to the executor; each call is one connection. */
  connect(): Observable<Transport>;
  /** Stops the executor and every process it runs. */
  shutdown(): Promise<void>;
}

/** The local environment: a session on an executor inside this process. */
export function localEnvironment(
  id: string,
  executor: LocalExecutorConnector,
): SingleSessionEnvironment {
  return new SingleSessionEnvironment(
    id,
    'local',
    () => executor.connect().pipe(switchMap((transport) => initializeOn(transport))),
    () => void executor.shutdown(),
  );
}

function initializeOn(
  transport: Transport,
  initializeTimeoutMs: number = INITIALIZE_TIMEOUT_MS,
): Observable<ExecServerClient> {
  return ExecServerClient.connect(transport, {
    clientName: ENVIRONMENT_CLIENT_NAME,
    initializeTimeoutMs,
  });
}
