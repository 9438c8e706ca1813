/** The executor's Noise relay modes: multiplexed relay sockets, direct Noise, `--remote`. */
export {
  acceptAllHarnessKeys,
  registryHarnessKeyValidator,
  type HarnessKeyValidator,
} from './harnessKeyValidator.js';
export {
  DEFAULT_MULTIPLEXED_ENVIRONMENT_LIMITS,
  serveMultiplexedEnvironment,
  type HandshakeRefusal,
  type MultiplexedEnvironmentLimits,
  type MultiplexedEnvironmentOptions,
  type RelayDisconnectReason,
  type RelayEnvironmentEvent,
} from './multiplexedEnvironment.js';
export {
  startDirectNoiseExecServer,
  type DirectNoiseExecServer,
  type DirectNoiseExecServerOptions,
} from './directNoiseServer.js';
export {
  REMOTE_RECONNECT_INITIAL_BACKOFF_MS,
  REMOTE_RECONNECT_MAX_BACKOFF_MS,
  startRemoteExecServer,
  type RemoteEnvironmentEvent,
  type RemoteExecServer,
  type RemoteExecServerOptions,
} from './remoteEnvironment.js';
