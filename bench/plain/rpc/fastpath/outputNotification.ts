/**
 * Plain twin of src/rpc/fastpath/outputNotification.ts: a `process/output` notification as
 * `JSON.parse` and `classifyMessage` read it, with no bytes decoded ahead of the client.
 */
import { classifyMessage, type JsonRpcNotification } from '../../../../src/protocol/jsonrpc.js';
import { platform } from '../../../../src/platform/index.js';

export function decodedChunkOf(_params: unknown): Uint8Array | undefined {
  return undefined;
}

export function parseOutputNotification(text: string): JsonRpcNotification | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  const message = classifyMessage(value);
  if (message?.kind !== 'notification' || message.method !== 'process/output') return undefined;
  const { kind: _kind, ...notification } = message;
  return notification;
}

export function parseOutputNotificationUtf8(utf8: Uint8Array): JsonRpcNotification | undefined {
  return parseOutputNotification(platform.utf8Decode(utf8));
}
