/**
 * `execrx/browser`: the same client as `execrx` for web pages, webviews and Electron renderers
 * (no stdio transport). Built by scripts/bundle-browser.mjs into one self-contained ES module,
 * `dist/browser/execrx.js`, with the browser platform (global WebSocket, WebCrypto's CSPRNG,
 * `@noble/*`) in place of Node's. A page can open an executor URL only through a same-origin
 * pass-through (`execrx console` has one), because executors refuse upgrades with an `Origin`;
 * the Noise relay path goes through a rendezvous started with `--allow-origin`.
 */
export * from './isomorphic.js';
