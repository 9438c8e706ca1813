/** The TypeScript executor: a wire-compatible `codex exec-server`. */
export { startExecServer, parseListenUrl, DEFAULT_LISTEN_URL } from './execServer.js';
export type { ExecServer, ExecServerOptions, ListenAddress } from './execServer.js';
export { createExecutor } from './executor.js';
export type { Executor, ExecutorOptions } from './executor.js';
export type { ConnectionProcessor } from './connectionProcessor.js';
export { warmUpExecutor } from './fastpath/warmUp.js';
export type { WarmUpOptions, WarmUpReport } from './fastpath/warmUp.js';
export { environmentInfo, EXECUTOR_CAPABILITIES } from './environmentInfo.js';
export type { EnvironmentInfo } from './environmentInfo.js';
export { startLocalExecutor, type LocalExecutor } from './localExecutor.js';
export * from './relay/index.js';
export { loadWebSocketAuth, webSocketAuthRefusal } from './webSocketAuth.js';
export type { WebSocketAuth, WebSocketAuthFlags } from './webSocketAuth.js';
export type { WebSocketAuthMode } from './webSocketAuthMode.js';
