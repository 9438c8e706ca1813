/**
 * The executor's handler table, keyed by the method table (protocol/methods.ts): every client
 * request except `initialize` (connectionProcessor.ts) has an entry, either a handler or
 * `NOT_SERVED` (answered -32601 `exec-server stub does not implement \`<m>\` yet`, as the
 * binary answers what it lacks). A method added to the table without an entry here is a
 * compile error. Each handler decodes its params with a serde-worded decoder (params.ts) whose
 * input type must accept what the client's schema produces (`served` below), and
 * spec/server/params.spec.ts holds the decoders to the protocol schemas at run time.
 */
import type { z } from 'zod';
import { METHODS, type ClientMethod, type ParamsOf } from '../protocol/methods.js';
import type { ConfigLocations } from './configLayers.js';
import { discoverCapabilityRoots } from './discovery.js';
import { discoverCapabilitiesV2 } from './skillDiscovery.js';
import { readEnvironmentConfig } from './environmentConfig.js';
import { environmentInfo } from './environmentInfo.js';
import type { FileHandleTable } from './fileHandles.js';
import * as filesystem from './filesystem.js';
import type { HttpRequests } from './httpRequests.js';
import * as p from './params.js';
import type { ProcessManager } from './processManager.js';
import type { MissingWatches } from './watchMissing.js';

/** What a handler may use: the attached session's processes and the connection's own state. */
export interface HandlerContext {
  readonly processes: ProcessManager;
  readonly fileHandles: FileHandleTable;
  readonly http: HttpRequests;
  readonly missingWatches: MissingWatches;
  /** Where `environmentConfig/read` looks (resolved per request: `$CODEX_HOME` may change). */
  configLocations(): ConfigLocations;
  /** False once the session has been resumed by another connection. */
  stillAttached(): boolean;
}

export interface MethodSpec<P = unknown> {
  /** Word used in the gating errors: `client must call initialize before using <family> methods`. */
  readonly family: string;
  /** The params, decoded; throws the -32602 failure (params.ts `paramsDecoder`). */
  decode(params: unknown): P;
  run(context: HandlerContext, params: P): unknown;
}

/** The marker of a method the table has and this executor does not serve (yet). */
export interface NotServed {
  readonly served: false;
}
export const NOT_SERVED: NotServed = { served: false };

/** The requests the handler table covers: every client request but the handshake. */
export type ServedMethod = Exclude<ClientMethod, 'initialize'>;

/** `unknown` when the decoder's input type accepts the client's params of `M`, else a named error. */
type AcceptsClientParams<M extends ClientMethod, S extends z.ZodType> =
  ParamsOf<M> extends z.input<S> ? unknown : { readonly rejectsClientParamsOf: M };

/**
 * A handler for `method`. `schema` is the executor's serde-worded decoder; its input type must
 * accept every params value the client's schema produces (a compile-time check that the two
 * sides agree on the shape).
 */
function served<M extends ServedMethod, S extends z.ZodType>(
  method: M,
  schema: S & AcceptsClientParams<M, S>,
  run: (context: HandlerContext, params: z.output<S>) => unknown,
): MethodSpec {
  const family = METHODS[method].family ?? method;
  return { family, decode: p.paramsDecoder(schema), run } as MethodSpec;
}

export const HANDLERS: { readonly [M in ServedMethod]: MethodSpec | NotServed } = {
  'process/start': served('process/start', p.ProcessStartParams, (c, params) =>
    c.processes.start(params),
  ),
  'process/read': served('process/read', p.ProcessReadParams, (c, params) =>
    c.processes.read(params, () => c.stillAttached()),
  ),
  'process/write': served('process/write', p.ProcessWriteParams, (c, params) =>
    c.processes.write(params),
  ),
  'process/signal': served('process/signal', p.ProcessSignalParams, (c, params) =>
    c.processes.signal(params),
  ),
  'process/terminate': served('process/terminate', p.ProcessTerminateParams, (c, params) =>
    c.processes.terminate(params),
  ),
  'fs/readFile': served('fs/readFile', p.FsReadFileParams, (_c, params) =>
    filesystem.readFile(params),
  ),
  'fs/writeFile': served('fs/writeFile', p.FsWriteFileParams, (_c, params) =>
    filesystem.writeFile(params),
  ),
  'fs/createDirectory': served('fs/createDirectory', p.FsCreateDirectoryParams, (_c, params) =>
    filesystem.createDirectory(params),
  ),
  'fs/getMetadata': served('fs/getMetadata', p.FsGetMetadataParams, (_c, params) =>
    filesystem.getMetadata(params),
  ),
  'fs/canonicalize': served('fs/canonicalize', p.FsCanonicalizeParams, (_c, params) =>
    filesystem.canonicalize(params),
  ),
  'fs/readDirectory': served('fs/readDirectory', p.FsReadDirectoryParams, (_c, params) =>
    filesystem.readDirectory(params),
  ),
  'fs/remove': served('fs/remove', p.FsRemoveParams, (_c, params) => filesystem.remove(params)),
  'fs/copy': served('fs/copy', p.FsCopyParams, (_c, params) => filesystem.copy(params)),
  'fs/walk': served('fs/walk', p.FsWalkParams, (_c, params) => filesystem.walk(params)),
  'fs/open': served('fs/open', p.FsOpenParams, (c, params) => c.fileHandles.open(params)),
  'fs/readBlock': served('fs/readBlock', p.FsReadBlockParams, (c, params) =>
    c.fileHandles.readBlock(params),
  ),
  'fs/writeBlock': served('fs/writeBlock', p.FsWriteBlockParams, (c, params) =>
    c.fileHandles.writeBlock(params),
  ),
  'fs/close': served('fs/close', p.FsCloseParams, (c, params) => c.fileHandles.close(params)),
  'fs/watchMissing': served('fs/watchMissing', p.FsWatchMissingParams, (c, params) =>
    c.missingWatches.watch(params),
  ),
  'http/request': served('http/request', p.HttpRequestParams, (c, params) =>
    c.http.request(params),
  ),
  'environment/info': served('environment/info', p.NoParams, () => environmentInfo()),
  'environment/status': served('environment/status', p.NoParams, () => ({ status: 'ready' })),
  'environmentConfig/read': served(
    'environmentConfig/read',
    p.EnvironmentConfigReadParams,
    (c, params) => readEnvironmentConfig(params, () => c.configLocations()),
  ),
  'capabilityRoots/discoverV1': served(
    'capabilityRoots/discoverV1',
    p.CapabilityRootsDiscoverV1Params,
    (_c, params) => discoverCapabilityRoots(params),
  ),
  'capabilities/discoverV2': served(
    'capabilities/discoverV2',
    p.CapabilitiesDiscoverV2Params,
    (c, params) => discoverCapabilitiesV2(params, () => c.configLocations()),
  ),
};

/**
 * The serde-worded decoder of `method`'s params (params.ts `paramsDecoder`), for a request the
 * handler table does not cover (`initialize`); the same compile-time check as `served`.
 */
export function decoderOf<M extends ClientMethod, S extends z.ZodType>(
  _method: M,
  schema: S & AcceptsClientParams<M, S>,
): (params: unknown) => z.output<S> {
  return p.paramsDecoder(schema as z.ZodType<z.output<S>>);
}

/** The handler of `method`, or undefined when it is unknown or `NOT_SERVED` (-32601). */
export function handlerOf(method: string): MethodSpec | undefined {
  if (!Object.prototype.hasOwnProperty.call(HANDLERS, method)) return undefined;
  const entry = HANDLERS[method as ServedMethod];
  return 'run' in entry ? entry : undefined;
}
