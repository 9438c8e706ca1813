export * from './errors.js';
export * from './retryable.js';
export * from './registryClient.js';
export * from './connectProvider.js';
export { NOISE_RELAY_SECURITY_PROFILE } from './wire.js';
export {
  fetchPost,
  type HttpPost,
  type HttpPostRequest,
  type HttpPostResponse,
} from './httpJson.js';
