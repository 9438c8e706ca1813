/**
 * The `--ws-auth` modes, in a module of their own: the CLI's option parser names them, and its
 * main bundle then does not load the executor's authentication code (webSocketAuth.ts).
 */
export const WEB_SOCKET_AUTH_MODES = ['capability-token', 'signed-bearer-token'] as const;
export type WebSocketAuthMode = (typeof WEB_SOCKET_AUTH_MODES)[number];
