export * from './protocol/errors.js';
export type { Transport, TransportFactory } from './transport/transport.js';
