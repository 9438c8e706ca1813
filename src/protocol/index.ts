/** Wire protocol of the Codex exec-server: envelope, errors, schemas and the method registry. */
export * from './jsonrpc.js';
export * from './errors.js';
export * from './base64.js';
export * from './pathUri.js';
export * from './sandbox.js';
export * from './initialize.js';
export * from './environment.js';
export * from './process.js';
export * from './fs.js';
export * from './http.js';
export * from './network.js';
export * from './capabilities.js';
export * from './watchMissing.js';
export * from './methods.js';
