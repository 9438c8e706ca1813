// Replaces selectedCrypto.ts in the browser bundle (scripts/bundle-browser.mjs).
import type { PlatformCrypto } from './platform.js';
import { nobleCrypto } from './noble/nobleCrypto.js';
import { webCryptoAes256GcmOpener } from './browser/webCryptoAesGcm.js';

// Pure, so that a bundle without Noise leaves all of the crypto out.
export const platformCrypto: PlatformCrypto = /* @__PURE__ */ withWebCryptoOpen(nobleCrypto);

/** `@noble/*` plus WebCrypto's asynchronous AES-GCM open where the page has `crypto.subtle`. */
function withWebCryptoOpen(crypto: PlatformCrypto): PlatformCrypto {
  const aes256GcmOpener = webCryptoAes256GcmOpener();
  return aes256GcmOpener === undefined ? crypto : { ...crypto, aes256GcmOpener };
}
