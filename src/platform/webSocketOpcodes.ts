/** WebSocket frame opcodes (RFC 6455 §5.2), for the frame readers and writers of both ends. */
export const OPCODE = {
  continuation: 0x0,
  text: 0x1,
  binary: 0x2,
  close: 0x8,
  ping: 0x9,
  pong: 0xa,
} as const;
