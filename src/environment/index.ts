/** The environment layer: one lazily connected, self-recovering, refreshable session per environment. */
export {
  LazyRemoteExecServerClient,
  type LazyRemoteClientOptions,
  type ReadinessResult,
} from './lazyRemoteClient.js';
export type { EnvironmentConnectionState } from './managedSession.js';
export {
  noiseRendezvous,
  webSocketUrl,
  type DeferredTransportParams,
  type ExecServerTransportParams,
  type NoiseHarnessConnector,
  type NoiseTransportParams,
  type ProvisioningReadiness,
  type WebSocketTransportParams,
} from './transportParams.js';
export {
  ConnectionAttemptError,
  ProvisioningFailedError,
  isRetryableRecoveryError,
} from './errors.js';
export { registryRecoveryRetryDelayMs, registryRetryBaseDelayMs } from './registryBackoff.js';
export { recoverSession, type RecoveryOptions } from './sessionRecovery.js';
export type { ReconnectStrategy, ReopenedTransport } from './sessionConnector.js';
