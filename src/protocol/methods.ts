/**
 * The method table: every method of the wire dialect, once — its name, who sends it, whether it
 * is a request or a notification, its params (and result) schema, the gating family the
 * executor names before the handshake, and the `environment/info` capability that gates it.
 *
 * Both ends are keyed by this table: the client's `call(method, params, options)` takes its
 * types from it (client/callRouter.ts), the executor's handler table must name every client
 * request (server/methods.ts `HANDLERS`), and the client's public wrappers are listed per method
 * (client/wrappers.ts `CLIENT_WRAPPERS`). Adding an entry here without a handler (or an explicit
 * `NOT_SERVED`) and a wrapper (or `NOT_WRAPPED`) is a compile error there.
 * Guarded by spec/protocol/fixtures.spec.ts (every schema against the binary's transcripts) and
 * spec/server/methods.spec.ts (the handler table against this one: coverage, gating families).
 */
import type { z } from 'zod';
import * as cap from './capabilities.js';
import type { EnvironmentCapabilities } from './environment.js';
import * as env from './environment.js';
import * as fs from './fs.js';
import * as http from './http.js';
import * as init from './initialize.js';
import * as net from './network.js';
import * as proc from './process.js';
import * as watch from './watchMissing.js';

/** The capability flag of `environment/info` that says whether the executor has a method. */
export type CapabilityFlag = keyof EnvironmentCapabilities;

/** Who sends a method: the client (harness) or the executor. */
export type Sender = 'client' | 'executor';

/** A request in the table: who sends it, its params and result schemas, and what gates it. */
export interface RequestEntry<P extends z.ZodType = z.ZodType, R extends z.ZodType = z.ZodType> {
  readonly direction: 'request';
  readonly from: Sender;
  readonly params: P;
  readonly result: R;
  /** Word of `client must call initialize before using <family> methods` (client requests). */
  readonly family: string | undefined;
  readonly capability: CapabilityFlag | undefined;
}

/**
 * A notification in the table: who sends it, its params schema, and the capability that gates it.
 */
export interface NotificationEntry<P extends z.ZodType = z.ZodType> {
  readonly direction: 'notification';
  readonly from: Sender;
  readonly params: P;
  readonly capability: CapabilityFlag | undefined;
}

/** One entry of `METHODS`. */
export type MethodEntry = RequestEntry | NotificationEntry;

interface Gate {
  readonly family?: string;
  readonly capability?: CapabilityFlag;
}

function request<F extends Sender, P extends z.ZodType, R extends z.ZodType>(
  from: F,
  params: P,
  result: R,
  gate: Gate = {},
): RequestEntry<P, R> & { readonly from: F } {
  return {
    direction: 'request',
    from,
    params,
    result,
    family: gate.family,
    capability: gate.capability,
  };
}

function notification<F extends Sender, P extends z.ZodType>(
  from: F,
  params: P,
  gate: Gate = {},
): NotificationEntry<P> & { readonly from: F } {
  return { direction: 'notification', from, params, capability: gate.capability };
}

// Families as probed on 0.169.0 (spec/fixtures/wire/gating.json).
const exec = { family: 'exec' } as const;
const filesystem = { family: 'filesystem' } as const;

/** Every method of the dialect, once. */
export const METHODS = {
  // Handshake.
  initialize: request('client', init.InitializeParams, init.InitializeResult),
  initialized: notification('client', init.InitializedNotification),

  // Environment.
  'environment/info': request('client', env.EnvironmentInfoParams, env.EnvironmentInfoResult, {
    family: 'environment info',
  }),
  'environment/status': request(
    'client',
    env.EnvironmentStatusParams,
    env.EnvironmentStatusResult,
    { family: 'environment status' },
  ),
  'environmentConfig/read': request(
    'client',
    env.EnvironmentConfigReadParams,
    env.EnvironmentConfigReadResult,
    { family: 'environment config', capability: 'environmentConfigRead' },
  ),

  // Processes.
  'process/start': request('client', proc.ProcessStartParams, proc.ProcessStartResult, exec),
  'process/read': request('client', proc.ProcessReadParams, proc.ProcessReadResult, exec),
  'process/write': request('client', proc.ProcessWriteParams, proc.ProcessWriteResult, exec),
  'process/signal': request('client', proc.ProcessSignalParams, proc.ProcessSignalResult, exec),
  'process/terminate': request(
    'client',
    proc.ProcessTerminateParams,
    proc.ProcessTerminateResult,
    exec,
  ),
  'process/output': notification('executor', proc.ProcessOutputNotification),
  'process/exited': notification('executor', proc.ProcessExitedNotification),
  'process/closed': notification('executor', proc.ProcessClosedNotification),

  // Filesystem.
  'fs/readFile': request('client', fs.FsReadFileParams, fs.FsReadFileResult, filesystem),
  'fs/writeFile': request('client', fs.FsWriteFileParams, fs.FsWriteFileResult, filesystem),
  'fs/createDirectory': request(
    'client',
    fs.FsCreateDirectoryParams,
    fs.FsCreateDirectoryResult,
    filesystem,
  ),
  'fs/getMetadata': request('client', fs.FsGetMetadataParams, fs.FsGetMetadataResult, filesystem),
  'fs/canonicalize': request(
    'client',
    fs.FsCanonicalizeParams,
    fs.FsCanonicalizeResult,
    filesystem,
  ),
  'fs/readDirectory': request(
    'client',
    fs.FsReadDirectoryParams,
    fs.FsReadDirectoryResult,
    filesystem,
  ),
  'fs/walk': request('client', fs.FsWalkParams, fs.FsWalkResult, filesystem),
  'fs/remove': request('client', fs.FsRemoveParams, fs.FsRemoveResult, filesystem),
  'fs/copy': request('client', fs.FsCopyParams, fs.FsCopyResult, filesystem),
  'fs/open': request('client', fs.FsOpenParams, fs.FsOpenResult, filesystem),
  'fs/readBlock': request('client', fs.FsReadBlockParams, fs.FsReadBlockResult, filesystem),
  'fs/writeBlock': request('client', fs.FsWriteBlockParams, fs.FsWriteBlockResult, {
    ...filesystem,
    capability: 'fileWriteStreaming',
  }),
  'fs/close': request('client', fs.FsCloseParams, fs.FsCloseResult, filesystem),
  'fs/watchMissing': request('client', watch.FsWatchMissingParams, watch.FsWatchMissingResult, {
    ...filesystem,
    capability: 'fsWatchMissing',
  }),
  'fs/missingChanged': notification('executor', watch.FsMissingChangedNotification, {
    capability: 'fsWatchMissing',
  }),

  // HTTP.
  'http/request': request('client', http.HttpRequestParams, http.HttpRequestResult, {
    family: 'http',
  }),
  'http/request/bodyDelta': notification('executor', http.HttpRequestBodyDeltaNotification),

  // Network policy (the executor asks the client).
  'network/policyRequest': request(
    'executor',
    net.NetworkPolicyRequestParams,
    net.NetworkPolicyRequestResult,
    { capability: 'networkProxyLaunch' },
  ),
  'network/policyDecision': notification('executor', net.NetworkPolicyDecisionNotification),

  // Capability discovery.
  'capabilityRoots/discoverV1': request(
    'client',
    cap.CapabilityRootsDiscoverV1Params,
    cap.CapabilityRootsDiscoverV1Result,
    { family: 'capability discovery' },
  ),
  'capabilities/discoverV2': request(
    'client',
    cap.CapabilitiesDiscoverV2Params,
    cap.CapabilitiesDiscoverV2Result,
    { family: 'capability discovery', capability: 'capabilityDiscoveryV2' },
  ),
} as const satisfies Record<string, MethodEntry>;

type Table = typeof METHODS;
/** Every method name of the dialect. */
export type MethodName = keyof Table;

type NamesWhere<Shape> = {
  [K in MethodName]: Table[K] extends Shape ? K : never;
}[MethodName];

/** Requests the client sends (the executor serves them). */
export type ClientMethod = NamesWhere<{ direction: 'request'; from: 'client' }>;
/** Notifications the client sends. */
export type ClientNotification = NamesWhere<{ direction: 'notification'; from: 'client' }>;
/** Notifications the executor sends. */
export type ServerNotification = NamesWhere<{ direction: 'notification'; from: 'executor' }>;
/** Requests the executor sends (the client answers them). */
export type ServerMethod = NamesWhere<{ direction: 'request'; from: 'executor' }>;

/** Parsed (output) params type of a client request: what callers build and what is sent. */
export type ParamsOf<M extends ClientMethod> = z.infer<Table[M]['params']>;
/** Parsed result type of a client request. */
export type ResultOf<M extends ClientMethod> = z.infer<Table[M]['result']>;
/** Parsed params type of a notification the executor sends. */
export type NotificationParamsOf<N extends ServerNotification> = z.infer<Table[N]['params']>;
/** Parsed params type of a request the executor sends (`network/policyRequest`). */
export type ServerParamsOf<M extends ServerMethod> = z.infer<Table[M]['params']>;
/** Parsed result type the client answers an executor request with. */
export type ServerResultOf<M extends ServerMethod> = z.infer<Table[M]['result']>;

function view<K extends MethodName>(
  keep: (entry: MethodEntry) => boolean,
): { readonly [P in K]: Table[P] } {
  const entries = Object.entries(METHODS).filter(([, entry]) => keep(entry));
  return Object.fromEntries(entries) as { readonly [P in K]: Table[P] };
}

/** Views of the table by sender and direction (entries, not copies). */
export const clientMethods = view<ClientMethod>(
  (e) => e.direction === 'request' && e.from === 'client',
);
/** Requests the executor sends, by name (entries of `METHODS`). */
export const serverMethods = view<ServerMethod>(
  (e) => e.direction === 'request' && e.from === 'executor',
);

function paramsView<K extends MethodName>(
  keep: (entry: MethodEntry) => boolean,
): { readonly [P in K]: Table[P]['params'] } {
  const entries = Object.entries(METHODS)
    .filter(([, entry]) => keep(entry))
    .map(([name, entry]) => [name, entry.params]);
  return Object.fromEntries(entries) as { readonly [P in K]: Table[P]['params'] };
}

/** Params schema of each notification, by sender. */
export const clientNotifications = paramsView<ClientNotification>(
  (e) => e.direction === 'notification' && e.from === 'client',
);
/** Params schema of each notification the executor sends. */
export const serverNotifications = paramsView<ServerNotification>(
  (e) => e.direction === 'notification' && e.from === 'executor',
);

function has(view: object, name: string): boolean {
  return Object.prototype.hasOwnProperty.call(view, name);
}

/** True when `name` is a request the client sends (and the executor serves). */
export function isClientMethod(name: string): name is ClientMethod {
  return has(clientMethods, name);
}

/** True when `name` is a notification the executor sends. */
export function isServerNotification(name: string): name is ServerNotification {
  return has(serverNotifications, name);
}

/**
 * The handshake-gating family of a method, as it appears in the executor's
 * "client must call initialize before using <family> methods" errors (§3.5).
 */
export function methodFamily(name: ClientMethod): string | undefined {
  return METHODS[name].family;
}
