export { platform } from './selected.js';
export { platformCrypto } from './selectedCrypto.js';
export {
  WEBSOCKET_CLOSED,
  WEBSOCKET_CLOSING,
  WEBSOCKET_CONNECTING,
  WEBSOCKET_OPEN,
  type Platform,
  type AsyncAesGcmOpen,
  type PlatformCrypto,
  type PlatformWebSocket,
  type RefusedUpgrade,
  type WebSocketData,
  type WebSocketEvents,
  type WebSocketOpenOptions,
  type WebSocketTlsOptions,
} from './platform.js';

import { platform } from './selected.js';

/** `platform.randomUUID`, importable on its own. */
export const randomUUID = (): string => platform.randomUUID();
/** `platform.utf8ByteLength`, importable on its own. */
export const utf8ByteLength = (text: string): number => platform.utf8ByteLength(text);
