/**
 * Test helper: a loopback TCP server that plays the server side of a WebSocket connection byte
 * by byte. It reads the client's upgrade request, hands the test a {@link RawConnection} (the
 * request, the correct `Sec-WebSocket-Accept`, frame builders) and lets the test write whatever
 * bytes it likes: a proper `101`, a wrong one, an HTTP error, frames that break RFC 6455. It
 * parses the client's (masked) frames and answers a client Close with a Close echoing its
 * payload, then ends the TCP connection, as a well-behaved server does.
 */
import { createHash } from 'node:crypto';
import { createServer, type AddressInfo, type Socket } from 'node:net';
import { Opcode } from './clientFrames.js';

const GUID = '258EAFA5-E914-47DA-95CA-C5AB0DC85B11';

/** The RFC 6455 opcodes, as the specs' own frame builder names them. */
export const OPCODE = Opcode;

/** One frame the client sent, unmasked. */
export interface ClientFrame {
  readonly fin: boolean;
  readonly opcode: number;
  readonly masked: boolean;
  /** The masking key (empty when unmasked). */
  readonly mask: Buffer;
  readonly payload: Buffer;
}

export interface RawConnection {
  readonly socket: Socket;
  /** `GET /path HTTP/1.1`. */
  readonly requestLine: string;
  /** Request headers, names lowercased. */
  readonly headers: Readonly<Record<string, string>>;
  /** The correct `Sec-WebSocket-Accept` for the client's key. */
  readonly accept: string;
  /** A `101 Switching Protocols` head with `accept` (default the correct one) and `extra` lines. */
  switching(extra?: readonly string[], accept?: string): Buffer;
  /** The frames the client sent so far. */
  readonly frames: readonly ClientFrame[];
  /** Resolves with the first client frame with `opcode` (already sent or next), within `ms`. */
  frame(opcode: number, ms?: number): Promise<ClientFrame>;
  /** The close code of the client's Close frame (1005 when it had none), once one arrived. */
  readonly closeCode: number | undefined;
  /** Resolves when the TCP connection is closed. */
  readonly ended: Promise<void>;
}

export interface RawServer {
  readonly url: string;
  readonly port: number;
  /** Resolves with the next upgrade request (already accepted or next). */
  nextConnection(ms?: number): Promise<RawConnection>;
  /** Destroys every connection and stops listening. */
  close(): Promise<void>;
}

/** A frame a server sends: unmasked unless `mask` is given; `length` overrides the announced length. */
export function frame(
  opcode: number,
  payload: string | Uint8Array = new Uint8Array(0),
  options: { fin?: boolean; rsv?: number; mask?: Uint8Array; length?: number } = {},
): Buffer {
  const body = typeof payload === 'string' ? Buffer.from(payload, 'utf8') : Buffer.from(payload);
  const length = options.length ?? body.length;
  const first = ((options.fin ?? true) ? 0x80 : 0) | ((options.rsv ?? 0) << 4) | opcode;
  const maskBit = options.mask === undefined ? 0 : 0x80;
  let head: Buffer;
  if (length < 126) head = Buffer.from([first, maskBit | length]);
  else if (length < 0x10000) {
    head = Buffer.alloc(4);
    head.writeUInt16BE(length, 2);
    head[1] = maskBit | 126;
  } else {
    head = Buffer.alloc(10);
    head.writeBigUInt64BE(BigInt(length), 2);
    head[1] = maskBit | 127;
  }
  head[0] = first;
  if (options.mask === undefined) return Buffer.concat([head, body]);
  const mask = options.mask;
  const masked = body.map((byte, index) => byte ^ mask[index % 4]!);
  return Buffer.concat([head, Buffer.from(mask), masked]);
}

/** A Close frame with `code` (none when undefined) and `reason`. */
export function closeFrame(code?: number, reason = ''): Buffer {
  if (code === undefined) return frame(OPCODE.close);
  const payload = Buffer.alloc(2 + Buffer.byteLength(reason));
  payload.writeUInt16BE(code, 0);
  payload.write(reason, 2, 'utf8');
  return frame(OPCODE.close, payload);
}

/** Parses complete frames off the front of `buffer`; returns them and the unparsed rest. */
function parseFrames(buffer: Buffer): { frames: ClientFrame[]; rest: Buffer } {
  const frames: ClientFrame[] = [];
  let offset = 0;
  for (;;) {
    if (buffer.length - offset < 2) break;
    const first = buffer[offset]!;
    const second = buffer[offset + 1]!;
    const masked = (second & 0x80) !== 0;
    let length = second & 0x7f;
    let cursor = offset + 2;
    if (length === 126) {
      if (buffer.length < cursor + 2) break;
      length = buffer.readUInt16BE(cursor);
      cursor += 2;
    } else if (length === 127) {
      if (buffer.length < cursor + 8) break;
      length = Number(buffer.readBigUInt64BE(cursor));
      cursor += 8;
    }
    const maskLength = masked ? 4 : 0;
    if (buffer.length < cursor + maskLength + length) break;
    const mask = Buffer.from(buffer.subarray(cursor, cursor + maskLength));
    const payload = Buffer.from(buffer.subarray(cursor + maskLength, cursor + maskLength + length));
    if (masked) for (let i = 0; i < payload.length; i++) payload[i]! ^= mask[i % 4]!;
    frames.push({ fin: (first & 0x80) !== 0, opcode: first & 0x0f, masked, mask, payload });
    offset = cursor + maskLength + length;
  }
  return { frames, rest: buffer.subarray(offset) };
}

function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    promise,
    new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new Error(`timed out after ${ms} ms waiting for ${what}`)),
        ms,
      );
    }),
  ]).finally(() => clearTimeout(timer));
}

function accepted(socket: Socket, head: string): RawConnection {
  const [requestLine = '', ...lines] = head.split('\r\n');
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    if (colon > 0)
      headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  const accept = createHash('sha1')
    .update((headers['sec-websocket-key'] ?? '') + GUID)
    .digest('base64');
  const frames: ClientFrame[] = [];
  const waiters = new Set<() => void>();
  let pending: Buffer = Buffer.alloc(0);
  let closeCode: number | undefined;
  socket.on('data', (chunk: Buffer) => {
    const parsed = parseFrames(Buffer.concat([pending, chunk]));
    pending = parsed.rest;
    for (const received of parsed.frames) {
      frames.push(received);
      if (received.opcode === OPCODE.close && closeCode === undefined) {
        closeCode = received.payload.length >= 2 ? received.payload.readUInt16BE(0) : 1005;
        if (socket.writable) socket.end(frame(OPCODE.close, received.payload));
      }
    }
    waiters.forEach((wake) => wake());
  });
  const ended = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  return {
    socket,
    requestLine,
    headers,
    accept,
    switching: (extra = [], acceptValue = accept) =>
      Buffer.from(
        [
          'HTTP/1.1 101 Switching Protocols',
          'Upgrade: websocket',
          'Connection: Upgrade',
          `Sec-WebSocket-Accept: ${acceptValue}`,
          ...extra,
          '',
          '',
        ].join('\r\n'),
      ),
    frames,
    frame: (opcode, ms = 5_000) =>
      withTimeout(
        new Promise<ClientFrame>((resolve) => {
          const check = (): void => {
            const found = frames.find((f) => f.opcode === opcode);
            if (found === undefined) return;
            waiters.delete(check);
            resolve(found);
          };
          waiters.add(check);
          check();
        }),
        ms,
        `a client frame with opcode ${opcode}`,
      ),
    get closeCode() {
      return closeCode;
    },
    ended,
  };
}

/** Listens on 127.0.0.1:0; `script` runs once per upgrade request and writes the answer. */
export async function startRawServer(
  script: (connection: RawConnection) => void | Promise<void>,
): Promise<RawServer> {
  const sockets = new Set<Socket>();
  const queue: RawConnection[] = [];
  const waiters: Array<(connection: RawConnection) => void> = [];
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.setNoDelay(true);
    socket.on('error', () => undefined);
    socket.once('close', () => sockets.delete(socket));
    let head = Buffer.alloc(0);
    const onHead = (chunk: Buffer): void => {
      head = Buffer.concat([head, chunk]);
      const end = head.indexOf('\r\n\r\n');
      if (end === -1) return;
      socket.off('data', onHead);
      const connection = accepted(socket, head.subarray(0, end).toString('latin1'));
      if (head.length > end + 4) socket.emit('data', head.subarray(end + 4));
      const waiter = waiters.shift();
      if (waiter) waiter(connection);
      else queue.push(connection);
      void Promise.resolve(script(connection)).catch(() => socket.destroy());
    };
    socket.on('data', onHead);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `ws://127.0.0.1:${port}`,
    port,
    nextConnection: (ms = 5_000) =>
      withTimeout(
        new Promise<RawConnection>((resolve) => {
          const ready = queue.shift();
          if (ready) resolve(ready);
          else waiters.push(resolve);
        }),
        ms,
        'an upgrade request',
      ),
    close: () =>
      new Promise<void>((resolve) => {
        sockets.forEach((socket) => socket.destroy());
        server.close(() => resolve());
      }),
  };
}

/** Writes `bytes` in pieces of `size`, one write per macrotask (1 ms apart). */
export async function dribble(socket: Socket, bytes: Buffer, size: number): Promise<void> {
  for (let offset = 0; offset < bytes.length; offset += size) {
    socket.write(bytes.subarray(offset, offset + size));
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
}
