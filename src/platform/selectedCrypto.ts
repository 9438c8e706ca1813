// The crypto primitives of this build. scripts/bundle-browser.mjs resolves this file to
// selectedCryptoBrowser.ts; everything else gets Node's.
export { nodeCrypto as platformCrypto } from './node/nodeCrypto.js';
