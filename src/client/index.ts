/** The session layer: one logical exec-server session and its processes, files and HTTP. */
export {
  ExecServerClient,
  isRetryableResumeError,
  type ExecServerClientOptions,
  type StartProcessOptions,
} from './execServerClient.js';
export type { SessionState, NetworkPolicyHandler } from './sessionCore.js';
export type { NetworkPolicyPrompt, NetworkPolicyOutcome } from './networkPolicyPrompts.js';
export {
  ProcessHandle,
  type ProcessReadOptions,
  type ProcessReadResponse,
} from './processHandle.js';
export type {
  ProcessEvent,
  ProcessOutputEvent,
  ProcessExitedEvent,
  ProcessClosedEvent,
  ProcessStream,
} from './processEvents.js';
export {
  FileSystemClient,
  type FileMetadata,
  type DirectoryEntry,
  type FsCallOptions,
  type WalkEntry,
  type WalkOutcome,
} from './fileSystemClient.js';
export type { CapabilityRootRequest, EnvironmentConfigReadOptions } from './sessionCalls.js';
export {
  HttpClient,
  type BufferedHttpResponse,
  type HttpRequest,
  type HttpRequestHeader,
  type HttpResponse,
} from './httpClient.js';
