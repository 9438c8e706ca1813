// The platform of this build. scripts/bundle-browser.mjs resolves this file to
// selectedBrowser.ts; everything else (Node, the specs, the CLI bundle) gets Node's.
export { nodePlatform as platform } from './node/nodePlatform.js';
