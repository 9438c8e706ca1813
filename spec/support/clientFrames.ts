/**
 * Hand-built WebSocket client frames (RFC 6455 §5.2) for specs that talk to the executor below
 * any WebSocket library: every header bit, length form and mask can be set, or broken.
 */

export const Opcode = {
  continuation: 0x0,
  text: 0x1,
  binary: 0x2,
  close: 0x8,
  ping: 0x9,
  pong: 0xa,
} as const;

export interface ClientFrameOptions {
  /** Default true. */
  fin?: boolean;
  /** RSV1..3 as a 3-bit number. Default 0. */
  rsv?: number;
  /** Default true: clients must mask. */
  masked?: boolean;
  key?: readonly [number, number, number, number];
  /** Length encoding: 7-bit when it fits, unless forced to the 16- or 64-bit form. */
  lengthForm?: 7 | 16 | 64;
  /** A length to announce instead of the payload's. */
  announcedLength?: number;
}

/** The four bytes of `value`, big-endian. */
export function uint32(value: number): number[] {
  return [(value >>> 24) & 0xff, (value >>> 16) & 0xff, (value >>> 8) & 0xff, value & 0xff];
}

/** RFC 6455 §5.3 written out the plain way: byte i XOR key[i mod 4]. */
export function referenceMask(payload: Buffer, key: readonly number[]): Buffer {
  const out = Buffer.alloc(payload.length);
  for (let index = 0; index < payload.length; index += 1) {
    out[index] = (payload[index] as number) ^ (key[index % 4] as number);
  }
  return out;
}

/** A client frame as a peer would send it (masked unless told otherwise). */
export function clientFrame(
  opcode: number,
  payload: Buffer | string,
  options: ClientFrameOptions = {},
): Buffer {
  const body = Buffer.from(payload);
  const { fin = true, rsv = 0, masked = true, key = [0x37, 0xfa, 0x21, 0x3d] } = options;
  const length = options.announcedLength ?? body.length;
  const form = options.lengthForm ?? (length < 126 ? 7 : length < 65_536 ? 16 : 64);
  const maskBit = masked ? 0x80 : 0;
  const head = [(fin ? 0x80 : 0) | (rsv << 4) | opcode];
  if (form === 7) head.push(maskBit | length);
  else if (form === 16) head.push(maskBit | 126, length >> 8, length & 0xff);
  else head.push(maskBit | 127, ...uint32(Math.floor(length / 2 ** 32)), ...uint32(length >>> 0));
  if (!masked) return Buffer.concat([Buffer.from(head), body]);
  return Buffer.concat([Buffer.from(head), Buffer.from(key), referenceMask(body, key)]);
}
