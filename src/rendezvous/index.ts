/**
 * Self-hostable environment registry + rendezvous relay for the Noise path
 * (noise-relay.md §1, §6). `startRendezvous` is the whole public surface; the rest is
 * exported for operators and tests.
 */
export {
  DEFAULT_AUTHORIZATION_TTL_MS,
  startRendezvous,
  type Rendezvous,
  type RendezvousEnvironmentStatus,
  type RendezvousOptions,
} from './rendezvousServer.js';
export {
  memoryRendezvousStore,
  tokenId,
  type RendezvousNodeInfo,
  type RendezvousStore,
  type StoredRegistration,
} from './rendezvousStore.js';
export { redisRendezvousStore, type RedisStoreOptions } from './redisStore.js';
export {
  ENVIRONMENT_ID_PATTERN,
  escapeForLog,
  isEnvironmentId,
  tokenMatches,
  type TokenPair,
} from './trust.js';
export { runRendezvousCommand, type RendezvousCommandOptions } from './rendezvousCommand.js';
export {
  checkHarnessAuthorization,
  harnessKeyFingerprint,
  issueHarnessAuthorization,
  type HarnessAuthorizationCheck,
  type HarnessAuthorizationRejection,
  type HarnessAuthorizationScope,
} from './harnessAuthorization.js';
export type { RendezvousCounters, RendezvousEvent } from './rendezvousEvents.js';
export { RendezvousFrameError, type DroppedFrameCause } from './rendezvousErrors.js';
export {
  signRendezvousUrl,
  verifyRendezvousUrl,
  type ParsedRendezvousUrl,
  type RendezvousRole,
  type RendezvousUrlClaims,
  type RendezvousUrlProblem,
} from './rendezvousUrl.js';
export { MAX_REGISTRY_REQUEST_BYTES } from './registryEndpoints.js';
