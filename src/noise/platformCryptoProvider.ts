import { platform, platformCrypto } from '../platform/index.js';
import type { NoiseCryptoProvider } from './cryptoProvider.js';
import {
  nodeMlKem768Decapsulate,
  nodeMlKem768Encapsulate,
  nodeMlKem768KeyPair,
} from './nodeMlKem768.js';

/**
 * The default provider: the platform seam's primitives (on Node `node:crypto`, i.e. OpenSSL;
 * in browsers `@noble/*` and WebCrypto's CSPRNG) and ML-KEM-768 from `nodeMlKem768.ts` (FIPS
 * 203 in TypeScript over the platform's SHA-3 and SHAKE).
 */
export const platformCryptoProvider: NoiseCryptoProvider = {
  ...platformCrypto,
  name: platform.name,
  mlkem768KeyPair: nodeMlKem768KeyPair,
  mlkem768Encapsulate: nodeMlKem768Encapsulate,
  mlkem768Decapsulate: nodeMlKem768Decapsulate,
};
