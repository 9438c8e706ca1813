/**
 * execrx: a reactive (RxJS) client for the Codex exec-server protocol.
 *
 * Most programs need only this entry point: an `Environment` / `LazyRemoteExecServerClient`
 * that connects lazily, recovers and refreshes by itself and publishes `connectionState$`,
 * or, one level down, an `ExecServerClient` on a transport you open yourself. The executor,
 * the rendezvous and the wire schemas live at `execrx/server`, `execrx/rendezvous` and
 * `execrx/protocol`.
 */
export * from './protocol/errors.js';
export * from './environment/index.js';
export * from './client/index.js';
export type { Transport, TransportFactory } from './transport/transport.js';
export {
  connectWebSocket,
  fromWebSocket,
  type WebSocketConnectOptions,
} from './transport/webSocketTransport.js';
export { fromStdio, spawnStdioTransport } from './transport/stdioTransport.js';
export { validateWebSocketHeaders } from './transport/webSocketHeaders.js';
export type { WebSocketTlsOptions } from './transport/webSocketProxy.js';
export { traceRequests } from './transport/tracedTransport.js';
export * from './protocol/w3cTraceContext.js';
export {
  connectNoiseHarness,
  type NoiseHarnessOptions,
} from './transport/noiseHarnessTransport.js';
export {
  NoiseChannelIdentity,
  NoiseChannelPublicKey,
  type NoiseChannelPublicKeyJson,
} from './noise/index.js';
export {
  EnvironmentRegistryClient,
  RegistryConnectProvider,
  isRetryableRegistryError,
  type NoiseRendezvousConnectBundle,
  type NoiseRendezvousConnectProvider,
} from './registry/index.js';
