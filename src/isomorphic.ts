/**
 * The client API that runs unchanged on Node and in browsers (everything of `execrx` except
 * the Node-only stdio transport). `index.ts` (Node) and `browser.ts` re-export it.
 */
export * from './protocol/errors.js';
export * from './environment/index.js';
export * from './client/index.js';
export type { Transport, TransportFactory } from './transport/transport.js';
export {
  connectWebSocket,
  fromWebSocket,
  type WebSocketConnectOptions,
  type WebSocketTransportOptions,
} from './transport/webSocketTransport.js';
export { validateWebSocketHeaders } from './transport/webSocketHeaders.js';
export type { WebSocketTlsOptions } from './platform/index.js';
export { traceRequests } from './transport/tracedTransport.js';
export * from './protocol/w3cTraceContext.js';
export {
  connectNoiseHarness,
  type NoiseHarnessOptions,
} from './transport/noiseHarnessTransport.js';
export {
  NoiseChannelIdentity,
  NoiseChannelPublicKey,
  NoiseKeyGenerationError,
  NoisePublicKeyError,
  type NoiseChannelPublicKeyJson,
  type NoiseCryptoProvider,
  type NoiseIdentityGenerateOptions,
  type NoiseIdentityOptions,
  type NoiseIdentitySecrets,
  type RandomSource,
} from './noise/index.js';
export {
  EnvironmentRegistryClient,
  RegistryConnectProvider,
  isRetryableRegistryError,
  type EnvironmentRegistration,
  type EnvironmentRegistryClientOptions,
  type HarnessKeyValidationRequest,
  type NoiseRendezvousConnectBundle,
  type NoiseRendezvousConnectProvider,
} from './registry/index.js';
