// Replaces selectedCrypto.ts in the browser bundle (scripts/bundle-browser.mjs).
export { nobleCrypto as platformCrypto } from './noble/nobleCrypto.js';
