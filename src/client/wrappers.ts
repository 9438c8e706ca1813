/**
 * The public wrapper of every client request in the method table (protocol/methods.ts), or
 * `NOT_WRAPPED` for a method the client does not offer yet. A method added to the table
 * without an entry here is a compile error; an entry is the member that sends it, so
 * renaming or removing that member is one too.
 */
import type { ClientMethod } from '../protocol/methods.js';
import { ExecServerClient } from './execServerClient.js';
import { FileSystemClient } from './fileSystemClient.js';
import { HttpClient } from './httpClient.js';
import { ProcessHandle } from './processHandle.js';

/** The marker of a table method without a public wrapper. */
export interface NotWrapped {
  readonly wrapped: false;
}
export const NOT_WRAPPED: NotWrapped = { wrapped: false };

type Member = (...args: never[]) => unknown;

const client = ExecServerClient.prototype;
const fs = FileSystemClient.prototype;
const handle = ProcessHandle.prototype;

export const CLIENT_WRAPPERS: { readonly [M in ClientMethod]: Member | NotWrapped } = {
  initialize: ExecServerClient.connect,
  'environment/info': client.environmentInfo,
  'environment/status': client.environmentStatus,
  'environmentConfig/read': client.readEnvironmentConfig,
  'process/start': client.startProcess,
  'process/read': handle.read,
  'process/write': handle.write,
  'process/signal': handle.signal,
  'process/terminate': handle.terminate,
  'fs/readFile': fs.readFile,
  'fs/writeFile': fs.writeFile,
  'fs/createDirectory': fs.createDirectory,
  'fs/getMetadata': fs.getMetadata,
  'fs/canonicalize': fs.canonicalize,
  'fs/readDirectory': fs.readDirectory,
  'fs/walk': fs.walk,
  'fs/remove': fs.remove,
  'fs/copy': fs.copy,
  'fs/open': fs.readFileStream,
  'fs/readBlock': fs.readFileStream,
  'fs/writeBlock': fs.writeFileStream,
  'fs/close': fs.readFileStream,
  'fs/watchMissing': NOT_WRAPPED,
  'http/request': HttpClient.prototype.request,
  'capabilityRoots/discoverV1': client.discoverCapabilityRoots,
  'capabilities/discoverV2': client.discoverCapabilities,
};
