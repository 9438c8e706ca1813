/**
 * The session calls of the Rust client beyond processes, files and HTTP streams
 * (`client.rs` / `environment.rs` at 7efd184): uncached environment info, environment config,
 * capability discovery v1 (with its replay after recovery) and v2. `ExecServerClient` exposes
 * each as a member; they live here to keep that file to its lifecycle.
 * Guarded by spec/client/sessionCalls.spec.ts and spec/client/sessionCalls.codex.spec.ts.
 */
import {
  type Observable,
  catchError,
  defer,
  filter,
  switchMap,
  take,
  throwError,
  timeout,
} from 'rxjs';
import type {
  CapabilitiesDiscoverV2Result,
  CapabilityRootsDiscoverV1Result,
} from '../protocol/capabilities.js';
import type { EnvironmentConfigReadResult, EnvironmentInfo } from '../protocol/environment.js';
import { ProtocolError, isTransportClosed } from '../protocol/errors.js';
import { pathToFileUri } from '../protocol/pathUri.js';
import type { FileSystemSandboxContext } from '../protocol/sandbox.js';
import { ENVIRONMENT_INFO_TIMEOUT_MS } from './limits.js';
import type { SessionCore } from './sessionCore.js';

/** How long discovery v1 waits for a recovering session before its one replay (§19). */
const DISCOVERY_RECOVERY_WAIT_MS = 8_000;

/** `environmentConfig/read` params, with a native `cwd`. */
export interface EnvironmentConfigReadOptions {
  /** Native absolute directory whose project layers are read. */
  readonly cwd: string;
  /** TOML key paths of the config to keep (`[['mcp_servers']]`); at least one path overall. */
  readonly configPaths: readonly (readonly string[])[];
  readonly requirementsPaths: readonly (readonly string[])[];
  /** Budget for the answer; on timeout a recoverable session replaces its transport. */
  readonly timeoutMs?: number;
}

/** One root for `capabilityRoots/discoverV1`, with a native `path`. */
export interface CapabilityRootRequest {
  readonly id: string;
  readonly path: string;
  readonly sandbox?: FileSystemSandboxContext | null;
}

/** `environment/info` without the session cache (Rust `force_environment_info`), 30 s budget. */
export function forceEnvironmentInfo(core: SessionCore): Observable<EnvironmentInfo> {
  return core.calls.call('environment/info', null, {
    timeoutMs: ENVIRONMENT_INFO_TIMEOUT_MS,
    replaceTransportOnTimeout: true,
  });
}

/** `environmentConfig/read` (Rust `read_environment_config[_with_timeout]`). */
export function readEnvironmentConfig(
  core: SessionCore,
  options: EnvironmentConfigReadOptions,
): Observable<EnvironmentConfigReadResult> {
  return core.calls.call(
    'environmentConfig/read',
    () => ({
      cwd: pathToFileUri(options.cwd),
      configPaths: options.configPaths.map((path) => [...path]),
      requirementsPaths: options.requirementsPaths.map((path) => [...path]),
    }),
    options.timeoutMs === undefined
      ? {}
      : { timeoutMs: options.timeoutMs, replaceTransportOnTimeout: true },
  );
}

/**
 * `capabilityRoots/discoverV1` (Rust `discover_capability_roots`): roots carrying a sandbox
 * need the executor's `capabilityDiscoverySandbox` capability; when the transport is lost
 * while the call is in flight, it waits up to 8 s for the session to be connected again and
 * replays the discovery once (a second loss is the caller's error).
 */
export function discoverCapabilityRoots(
  core: SessionCore,
  environmentInfo: () => Observable<EnvironmentInfo>,
  roots: readonly CapabilityRootRequest[],
): Observable<CapabilityRootsDiscoverV1Result> {
  const params = () => ({
    roots: roots.map((root) => ({
      id: root.id,
      path: pathToFileUri(root.path),
      ...(root.sandbox == null ? {} : { sandbox: root.sandbox }),
    })),
  });
  const send = () => core.calls.call('capabilityRoots/discoverV1', params);
  const lifecycle = core.lifecycle;
  const replayOnce = defer(() => {
    // The transport the first try goes out on: the replay waits for another one.
    const first = lifecycle.liveRpc;
    return send().pipe(
      catchError((error: unknown) => {
        if (!isTransportClosed(error) || lifecycle.terminalError) return throwError(() => error);
        return lifecycle.state$.pipe(
          filter(
            () =>
              lifecycle.terminalError !== undefined ||
              (lifecycle.liveRpc !== undefined && lifecycle.liveRpc !== first),
          ),
          take(1),
          timeout({
            first: DISCOVERY_RECOVERY_WAIT_MS,
            ...(core.options.scheduler ? { scheduler: core.options.scheduler } : {}),
            with: () => throwError(() => error),
          }),
          switchMap(() => send()),
        );
      }),
    );
  });
  if (!roots.some((root) => root.sandbox != null)) return replayOnce;
  return environmentInfo().pipe(
    switchMap((info) => {
      if (!info.capabilities.capabilityDiscoverySandbox) {
        return throwError(
          () => new ProtocolError('exec-server does not support sandboxed capability discovery'),
        );
      }
      return replayOnce;
    }),
  );
}

/** `capabilities/discoverV2` for a native `cwd`. */
export function discoverCapabilities(
  core: SessionCore,
  cwd: string,
): Observable<CapabilitiesDiscoverV2Result> {
  return core.calls.call('capabilities/discoverV2', () => ({ cwd: pathToFileUri(cwd) }));
}
