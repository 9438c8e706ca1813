import { nobleCrypto } from '../platform/noble/nobleCrypto.js';
import type { NoiseCryptoProvider } from './cryptoProvider.js';
import {
  nobleMlKem768Decapsulate,
  nobleMlKem768Encapsulate,
  nobleMlKem768KeyPair,
} from './nobleMlKem768.js';

/**
 * The portable provider: pure JavaScript `@noble/*` primitives only (no `node:crypto`), for
 * runtimes without OpenSSL. Slower than {@link platformCryptoProvider} on Node; wire-identical.
 */
export const nobleCryptoProvider: NoiseCryptoProvider = {
  ...nobleCrypto,
  name: 'noble',
  mlkem768KeyPair: nobleMlKem768KeyPair,
  mlkem768Encapsulate: nobleMlKem768Encapsulate,
  mlkem768Decapsulate: nobleMlKem768Decapsulate,
};
