export * from './frames.js';
export * from './messageFraming.js';
export * from './orderedReceiver.js';
export * from './keepalive.js';
export * from './dataStream.js';
export * from './pipelinedDataReceiver.js';
export { RelayProtocolError } from './relayProtocolError.js';
