/**
 * The executor's method table: gating family (spec §3.5), params schema and handler of every
 * request it serves. Methods absent here answer -32601.
 */
import type { z } from 'zod';
import type { ConfigLocations } from './configLayers.js';
import { discoverCapabilityRoots } from './discovery.js';
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

function method<P>(
  family: string,
  schema: z.ZodType<P>,
  run: (context: HandlerContext, params: P) => unknown,
): MethodSpec {
  return { family, decode: p.paramsDecoder(schema), run } as MethodSpec;
}

export const METHODS: ReadonlyMap<string, MethodSpec> = new Map<string, MethodSpec>([
  ['process/start', method('exec', p.ProcessStartParams, (c, params) => c.processes.start(params))],
  [
    'process/read',
    method('exec', p.ProcessReadParams, (c, params) =>
      c.processes.read(params, () => c.stillAttached()),
    ),
  ],
  ['process/write', method('exec', p.ProcessWriteParams, (c, params) => c.processes.write(params))],
  [
    'process/signal',
    method('exec', p.ProcessSignalParams, (c, params) => c.processes.signal(params)),
  ],
  [
    'process/terminate',
    method('exec', p.ProcessTerminateParams, (c, params) => c.processes.terminate(params)),
  ],
  [
    'fs/readFile',
    method('filesystem', p.FsReadFileParams, (_c, params) => filesystem.readFile(params)),
  ],
  [
    'fs/writeFile',
    method('filesystem', p.FsWriteFileParams, (_c, params) => filesystem.writeFile(params)),
  ],
  [
    'fs/createDirectory',
    method('filesystem', p.FsCreateDirectoryParams, (_c, params) =>
      filesystem.createDirectory(params),
    ),
  ],
  [
    'fs/getMetadata',
    method('filesystem', p.FsGetMetadataParams, (_c, params) => filesystem.getMetadata(params)),
  ],
  [
    'fs/canonicalize',
    method('filesystem', p.FsCanonicalizeParams, (_c, params) => filesystem.canonicalize(params)),
  ],
  [
    'fs/readDirectory',
    method('filesystem', p.FsReadDirectoryParams, (_c, params) => filesystem.readDirectory(params)),
  ],
  ['fs/remove', method('filesystem', p.FsRemoveParams, (_c, params) => filesystem.remove(params))],
  ['fs/copy', method('filesystem', p.FsCopyParams, (_c, params) => filesystem.copy(params))],
  ['fs/walk', method('filesystem', p.FsWalkParams, (_c, params) => filesystem.walk(params))],
  ['fs/open', method('filesystem', p.FsOpenParams, (c, params) => c.fileHandles.open(params))],
  [
    'fs/readBlock',
    method('filesystem', p.FsReadBlockParams, (c, params) => c.fileHandles.readBlock(params)),
  ],
  [
    'fs/writeBlock',
    method('filesystem', p.FsWriteBlockParams, (c, params) => c.fileHandles.writeBlock(params)),
  ],
  ['fs/close', method('filesystem', p.FsCloseParams, (c, params) => c.fileHandles.close(params))],
  ['http/request', method('http', p.HttpRequestParams, (c, params) => c.http.request(params))],
  ['environment/info', method('environment info', p.NoParams, () => environmentInfo())],
  [
    'environmentConfig/read',
    method('environment config', p.EnvironmentConfigReadParams, (c, params) =>
      readEnvironmentConfig(params, () => c.configLocations()),
    ),
  ],
  [
    'capabilityRoots/discoverV1',
    method('capability discovery', p.CapabilityRootsDiscoverV1Params, (_c, params) =>
      discoverCapabilityRoots(params),
    ),
  ],
  [
    'fs/watchMissing',
    method('filesystem', p.FsWatchMissingParams, (c, params) => c.missingWatches.watch(params)),
  ],
  ['environment/status', method('environment status', p.NoParams, () => ({ status: 'ready' }))],
]);
