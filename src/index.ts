/**
 * execrx: a reactive (RxJS) client for the Codex exec-server protocol.
 *
 * Most programs need only this entry point: an `Environment` / `LazyRemoteExecServerClient`
 * that connects lazily, recovers and refreshes by itself and publishes `connectionState$`,
 * or, one level down, an `ExecServerClient` on a transport you open yourself. The executor,
 * the rendezvous and the wire schemas live at `execrx/server`, `execrx/rendezvous` and
 * `execrx/protocol`.
 */
export * from './isomorphic.js';
export {
  fromStdio,
  spawnStdioTransport,
  type ChildExit,
  type SpawnedStdioTransport,
  type SpawnStdioOptions,
  type StdioTransportOptions,
} from './transport/stdioTransport.js';

// Node only: environments from the user's Codex setup (files, variables, stdio executors).
export {
  CodexEnvironments,
  readCodexSetup,
  REMOTE_ENVIRONMENT_ID,
  type CodexEnvironment,
  type CodexSetup,
  type CodexSetupEnvironment,
  type CodexSetupOptions,
  type OpenCodexEnvironmentsOptions,
} from './environment/codexSetup.js';
export {
  parseEnvironmentsToml,
  type ConfiguredEnvironment,
  type StdioCommandParams,
  type EnvironmentsTomlConfig,
} from './environment/environmentsToml.js';
export {
  SingleSessionEnvironment,
  localEnvironment,
  stdioCommandEnvironment,
  type LocalExecutorConnector,
} from './environment/singleSessionEnvironment.js';
