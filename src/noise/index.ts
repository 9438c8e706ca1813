/**
 * The codex Noise channel: `Noise_hybridIK_25519+MLKEM768_AESGCM_SHA256` (clatter 2.2.0
 * token order), pure and socket-free. The relay layer frames its messages; see
 * spec/noise-relay.md §2–3.
 *
 * ```ts
 * // Harness (initiator)
 * const bytes = prologue({ environmentId, executorRegistrationId, streamId });
 * const hs = initiatorHandshake({ identity, responderPublicKey: bundle.executor_public_key,
 *   prologue: bytes, authorization: bundle.harness_key_authorization });
 * send(hs.message1);                       // handshake frame
 * const { send, receive } = hs.finish(message2);
 *
 * // Executor (responder)
 * const request = responderHandshake({ identity, prologue: bytes, message1 });
 * await registry.validate(request.initiatorPublicKey.toJSON(), request.authorization);
 * const { message2, channel } = request.accept();
 * ```
 */
export {
  AEAD_TAG_LENGTH,
  HYBRID_IK_MESSAGE1_OVERHEAD,
  HYBRID_IK_MESSAGE2_LENGTH,
  MAX_HARNESS_KEY_AUTHORIZATION_BYTES,
  NOISE_CHANNEL_SUITE,
  NOISE_MAX_MESSAGE_LENGTH,
  NOISE_PROLOGUE_DOMAIN,
  NOISE_PROTOCOL_NAME,
} from './constants.js';
export type { NoiseCryptoProvider, RandomSource } from './cryptoProvider.js';
export {
  NoiseChannelError,
  NoiseDecryptError,
  NoiseHandshakeError,
  NoiseKeyGenerationError,
  NoisePublicKeyError,
  NoiseReplayError,
  NoiseTransportError,
  type NoiseHandshakeFailure,
} from './errors.js';
export {
  initiatorHandshake,
  responderHandshake,
  type InitiatorHandshakeOptions,
  type NoiseChannel,
  type NoiseInitiatorHandshake,
  type NoiseResponderHandshake,
  type ResponderHandshakeOptions,
} from './hybridIkHandshake.js';
export {
  NoiseChannelIdentity,
  type NoiseIdentityGenerateOptions,
  type NoiseIdentityOptions,
  type NoiseIdentitySecrets,
} from './identity.js';
export { nobleCryptoProvider } from './nobleCryptoProvider.js';
export { platformCryptoProvider } from './platformCryptoProvider.js';
export { prologue, type NoisePrologueParts } from './prologue.js';
export {
  NoiseChannelPublicKey,
  noiseChannelPublicKeyJsonSchema,
  type NoiseChannelPublicKeyJson,
} from './publicKey.js';
export { TransportCipher } from './transportCipher.js';
