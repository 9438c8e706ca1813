/**
 * Typed registry of the wire dialect: every method name with its params/result schemas, and
 * every notification with its params schema. The RPC layers look schemas up here so a method
 * name and its types can never drift apart.
 */
import type { z } from 'zod';
import * as cap from './capabilities.js';
import * as env from './environment.js';
import * as fs from './fs.js';
import * as http from './http.js';
import * as init from './initialize.js';
import * as net from './network.js';
import * as proc from './process.js';
import * as watch from './watchMissing.js';

interface MethodSchemas {
  params: z.ZodType;
  result: z.ZodType;
}

function method<P extends z.ZodType, R extends z.ZodType>(
  params: P,
  result: R,
): { params: P; result: R } {
  return { params, result };
}

/** Client → executor requests. */
export const clientMethods = {
  initialize: method(init.InitializeParams, init.InitializeResult),
  'environment/info': method(env.EnvironmentInfoParams, env.EnvironmentInfoResult),
  'environment/status': method(env.EnvironmentStatusParams, env.EnvironmentStatusResult),
  'environmentConfig/read': method(
    env.EnvironmentConfigReadParams,
    env.EnvironmentConfigReadResult,
  ),
  'process/start': method(proc.ProcessStartParams, proc.ProcessStartResult),
  'process/read': method(proc.ProcessReadParams, proc.ProcessReadResult),
  'process/write': method(proc.ProcessWriteParams, proc.ProcessWriteResult),
  'process/signal': method(proc.ProcessSignalParams, proc.ProcessSignalResult),
  'process/terminate': method(proc.ProcessTerminateParams, proc.ProcessTerminateResult),
  'fs/readFile': method(fs.FsReadFileParams, fs.FsReadFileResult),
  'fs/writeFile': method(fs.FsWriteFileParams, fs.FsWriteFileResult),
  'fs/createDirectory': method(fs.FsCreateDirectoryParams, fs.FsCreateDirectoryResult),
  'fs/getMetadata': method(fs.FsGetMetadataParams, fs.FsGetMetadataResult),
  'fs/canonicalize': method(fs.FsCanonicalizeParams, fs.FsCanonicalizeResult),
  'fs/readDirectory': method(fs.FsReadDirectoryParams, fs.FsReadDirectoryResult),
  'fs/walk': method(fs.FsWalkParams, fs.FsWalkResult),
  'fs/remove': method(fs.FsRemoveParams, fs.FsRemoveResult),
  'fs/copy': method(fs.FsCopyParams, fs.FsCopyResult),
  'fs/open': method(fs.FsOpenParams, fs.FsOpenResult),
  'fs/readBlock': method(fs.FsReadBlockParams, fs.FsReadBlockResult),
  'fs/writeBlock': method(fs.FsWriteBlockParams, fs.FsWriteBlockResult),
  'fs/close': method(fs.FsCloseParams, fs.FsCloseResult),
  'fs/watchMissing': method(watch.FsWatchMissingParams, watch.FsWatchMissingResult),
  'http/request': method(http.HttpRequestParams, http.HttpRequestResult),
  'capabilityRoots/discoverV1': method(
    cap.CapabilityRootsDiscoverV1Params,
    cap.CapabilityRootsDiscoverV1Result,
  ),
  'capabilities/discoverV2': method(
    cap.CapabilitiesDiscoverV2Params,
    cap.CapabilitiesDiscoverV2Result,
  ),
} satisfies Record<string, MethodSchemas>;

export type ClientMethod = keyof typeof clientMethods;
/** Parsed (output) params type of a client method: what callers build and what is sent. */
export type ParamsOf<M extends ClientMethod> = z.infer<(typeof clientMethods)[M]['params']>;
/** Parsed result type of a client method. */
export type ResultOf<M extends ClientMethod> = z.infer<(typeof clientMethods)[M]['result']>;

/** Client → executor notifications. */
export const clientNotifications = {
  initialized: init.InitializedNotification,
} satisfies Record<string, z.ZodType>;
export type ClientNotification = keyof typeof clientNotifications;

/** Executor → client notifications. */
export const serverNotifications = {
  'process/output': proc.ProcessOutputNotification,
  'process/exited': proc.ProcessExitedNotification,
  'process/closed': proc.ProcessClosedNotification,
  'http/request/bodyDelta': http.HttpRequestBodyDeltaNotification,
  'network/policyDecision': net.NetworkPolicyDecisionNotification,
  'fs/missingChanged': watch.FsMissingChangedNotification,
} satisfies Record<string, z.ZodType>;
export type ServerNotification = keyof typeof serverNotifications;
export type NotificationParamsOf<N extends ServerNotification> = z.infer<
  (typeof serverNotifications)[N]
>;

/** Executor → client requests (the client answers them). */
export const serverMethods = {
  'network/policyRequest': method(net.NetworkPolicyRequestParams, net.NetworkPolicyRequestResult),
} satisfies Record<string, MethodSchemas>;
export type ServerMethod = keyof typeof serverMethods;
export type ServerParamsOf<M extends ServerMethod> = z.infer<(typeof serverMethods)[M]['params']>;
export type ServerResultOf<M extends ServerMethod> = z.infer<(typeof serverMethods)[M]['result']>;

export function isClientMethod(name: string): name is ClientMethod {
  return Object.prototype.hasOwnProperty.call(clientMethods, name);
}

export function isServerNotification(name: string): name is ServerNotification {
  return Object.prototype.hasOwnProperty.call(serverNotifications, name);
}

/**
 * The handshake-gating family of a method, as it appears in the executor's
 * "client must call initialize before using <family> methods" errors (§3.5).
 */
export function methodFamily(name: ClientMethod): string | undefined {
  if (name === 'initialize') return undefined;
  if (name.startsWith('process/')) return 'exec';
  if (name.startsWith('fs/')) return 'filesystem';
  if (name === 'http/request') return 'http';
  if (name === 'environment/info') return 'environment info';
  if (name === 'environment/status') return 'environment status';
  // Probed on 0.169.0 (spec/fixtures/wire/gating.json).
  if (name === 'environmentConfig/read') return 'environment config';
  return 'capability discovery';
}
