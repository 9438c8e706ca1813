// Replaces selected.ts in the browser bundle (scripts/bundle-browser.mjs).
export { browserPlatform as platform } from './browser/browserPlatform.js';
