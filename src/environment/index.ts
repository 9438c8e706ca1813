/** The environment layer: one lazily connected, self-recovering, refreshable session per environment. */
export {
  LazyRemoteExecServerClient,
  type ConnectionAttemptOutcome,
  type ConnectionAttemptReport,
  type LazyRemoteClientOptions,
  type ReadinessResult,
} from './lazyRemoteClient.js';
export type { EnvironmentConnectionState } from './managedSession.js';
export type {
  ConnectionStatus,
  ConnectionStatusKind,
  RecoveryProgress,
} from './connectionStatus.js';
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
export { recoverSession, type RecoveryOptions, type RecoveryRetry } from './sessionRecovery.js';
export type { ReconnectStrategy, ReopenedTransport } from './sessionConnector.js';
export { Environment, type EnvironmentObservedStatus } from './environment.js';
export {
  EnvironmentManager,
  LOCAL_ENVIRONMENT_ID,
  type EnvironmentConfig,
  type EnvironmentDefault,
  type EnvironmentManagerOptions,
  type EnvironmentProviderSnapshot,
} from './environmentManager.js';
export { EnvironmentFileSystem } from './environmentFileSystem.js';
export { EnvironmentHttpClient, EnvironmentProcessBackend } from './environmentBackends.js';
export {
  MAX_SELECTED_CAPABILITY_ROOTS,
  type EnvironmentReadyInfo,
  type ProvisioningReport,
  type SelectedCapabilityRoot,
} from './provisioning.js';
export { ProvisioningModeConflictError } from './errors.js';
