/**
 * Test helper: a seeded, reproducible chaos relay for WebSocket connections on 127.0.0.1.
 * It passes each connection's HTTP upgrade through, then reads the WebSocket frames of both
 * directions and, decided by a PRNG seeded per connection (`seed` + connection index), drops,
 * delays, duplicates or reorders the frames a test marks as eligible, and cuts connections
 * (both sockets reset, possibly in the middle of a frame) after a random number of bytes.
 *
 * What a fault means depends on the path, which the options express:
 * - plain WebSocket: TCP never loses, duplicates or reorders a frame, so a lost frame is only
 *   ever part of a cut (`cutAfterDropMs: 0`), and reordering is left off; duplicates model a
 *   replay and delays model jitter.
 * - Noise relay: data frames carry a `seq`; receivers reorder and deduplicate within a window,
 *   and a gap (a dropped frame) is only detected by that window overflowing. A drop is
 *   therefore followed by a cut after `cutAfterDropMs` (a lossy link that finally resets).
 *
 * Reproducible as far as a network can be: a seed gives each connection (by the order it was
 * accepted) the same decisions; which frames a connection carries still depends on timing.
 *
 * Order within a direction is kept except for an explicit reorder (a frame held until the next
 * eligible frame has passed). Nothing is injected that the peer did not send.
 */
import { createServer, connect, type AddressInfo, type Socket } from 'node:net';
import { seededRandom } from './seededRandom.js';

export interface ChaosFrame {
  /** Client → server (the frames are masked) or server → client. */
  readonly direction: 'up' | 'down';
  readonly opcode: number;
  readonly fin: boolean;
  /** The unmasked payload. */
  readonly payload: Buffer;
}

export interface ChaosOptions {
  readonly seed: number;
  /** Probability per eligible frame of each fault (they exclude each other). Default 0. */
  readonly drop?: number;
  readonly duplicate?: number;
  readonly reorder?: number;
  readonly delay?: number;
  /** Longest delay of a delayed frame (it also holds back the frames after it). Default 20 ms. */
  readonly maxDelayMs?: number;
  /** Bytes (both directions) a connection carries before it is cut: [min, max]; none if absent. */
  readonly cutAfterBytes?: readonly [number, number];
  /** After a drop, cut the connection this many ms later (0: at once). Default: never. */
  readonly cutAfterDropMs?: number;
  /**
   * After a cut, refuse new connections for up to this many ms (seeded): an outage, during
   * which a fast process's output piles up on the executor. Default 0.
   */
  readonly outageMs?: number;
  /** Which frames may suffer a fault (cuts apply to any). Default: data frames (text, binary). */
  readonly eligible?: (frame: ChaosFrame) => boolean;
}

export interface ChaosStats {
  connections: number;
  frames: number;
  dropped: number;
  duplicated: number;
  reordered: number;
  delayed: number;
  cuts: number;
  bytes: number;
}

export interface ChaosRelay {
  /** `ws://127.0.0.1:PORT` of the relay. */
  readonly url: string;
  readonly stats: Readonly<ChaosStats>;
  /** Where connections go (`ws://host:port`); may be set after start (see `startChaosRelay`). */
  setUpstream(url: string): void;
  /** Stops all faults (and cuts) from now on, e.g. to let a test finish cleanly. */
  calm(): void;
  close(): Promise<void>;
}

const isDataFrame = (frame: ChaosFrame): boolean => frame.opcode === 1 || frame.opcode === 2;

export async function startChaosRelay(
  options: ChaosOptions,
  upstreamUrl?: string,
): Promise<ChaosRelay> {
  let upstream = upstreamUrl === undefined ? undefined : new URL(upstreamUrl);
  let calm = false;
  /** New connections are refused until then (an outage after a cut). */
  let downUntil = 0;
  const outageRandom = seededRandom(options.seed ^ 0x5bd1e995);
  const stats: ChaosStats = {
    connections: 0,
    frames: 0,
    dropped: 0,
    duplicated: 0,
    reordered: 0,
    delayed: 0,
    cuts: 0,
    bytes: 0,
  };
  const sockets = new Set<Socket>();
  const eligible = options.eligible ?? isDataFrame;

  const server = createServer((downstream) => {
    const index = stats.connections++;
    const random = seededRandom(options.seed + index * 7919);
    if (!upstream || (Date.now() < downUntil && !calm)) {
      downstream.resetAndDestroy();
      return;
    }
    const up = connect(Number(upstream.port), upstream.hostname);
    for (const socket of [downstream, up]) {
      sockets.add(socket);
      socket.setNoDelay(true);
      socket.on('error', () => undefined);
      socket.on('close', () => {
        sockets.delete(socket);
        cut(false);
      });
    }
    const [min, max] = options.cutAfterBytes ?? [Infinity, Infinity];
    let budget = min + Math.floor(random() * (max - min + 1));
    let ended = false;
    const timers = new Set<NodeJS.Timeout>();
    function cut(counted = true): void {
      if (ended) return;
      ended = true;
      if (counted) {
        stats.cuts += 1;
        if (options.outageMs) downUntil = Date.now() + outageRandom() * options.outageMs;
      }
      for (const timer of timers) clearTimeout(timer);
      downstream.resetAndDestroy();
      up.resetAndDestroy();
    }
    const later = (ms: number, action: () => void): void => {
      const timer = setTimeout(() => {
        timers.delete(timer);
        action();
      }, ms);
      timers.add(timer);
    };

    /** One direction: parses frames from `from` and writes them, with faults, to `to`. */
    const pump = (from: Socket, to: Socket, direction: 'up' | 'down'): void => {
      let head = true;
      /** Plain HTTP (no upgrade): passed through untouched, never cut. */
      let raw = false;
      let pending: Buffer = Buffer.alloc(0);
      /** Frames waiting for their delay; written in order. */
      const queue: { bytes: Buffer; at: number }[] = [];
      let flushing = false;
      let held: Buffer | undefined;
      let releaseAt = 0;

      const write = (bytes: Buffer): void => {
        if (ended) return;
        stats.bytes += bytes.length;
        budget -= bytes.length;
        if (budget < 0 && !calm) {
          // Cut inside this write: part of the frame goes out, then both sockets reset.
          to.write(bytes.subarray(0, Math.floor(random() * bytes.length)));
          cut();
          return;
        }
        if (!to.write(bytes)) {
          from.pause();
          to.once('drain', () => from.resume());
        }
      };
      const flush = (): void => {
        if (flushing) return;
        flushing = true;
        const step = (): void => {
          while (queue.length > 0 && !ended) {
            const wait = queue[0]!.at - Date.now();
            if (wait > 0) {
              later(wait, step);
              return;
            }
            write(queue.shift()!.bytes);
          }
          flushing = false;
        };
        step();
      };
      const send = (bytes: Buffer, delayMs = 0): void => {
        releaseAt = Math.max(releaseAt, Date.now() + delayMs);
        queue.push({ bytes, at: releaseAt });
        flush();
      };
      const releaseHeld = (): void => {
        if (held === undefined) return;
        const bytes = held;
        held = undefined;
        send(bytes);
      };

      const onFrame = (bytes: Buffer, frame: ChaosFrame): void => {
        stats.frames += 1;
        if (calm || !eligible(frame)) {
          // A held frame waits for the next eligible one (or its timer), not for control frames.
          send(bytes);
          if (calm) releaseHeld();
          return;
        }
        const roll = random();
        let edge = options.drop ?? 0;
        if (roll < edge) {
          stats.dropped += 1;
          if (options.cutAfterDropMs !== undefined) later(options.cutAfterDropMs, () => cut());
          return;
        }
        edge += options.duplicate ?? 0;
        if (roll < edge) {
          stats.duplicated += 1;
          send(bytes);
          send(bytes);
          releaseHeld();
          return;
        }
        edge += options.reorder ?? 0;
        if (roll < edge && held === undefined) {
          stats.reordered += 1;
          held = bytes;
          // Released after the next eligible frame, or soon if none comes.
          later(30, releaseHeld);
          return;
        }
        edge += options.delay ?? 0;
        if (roll < edge) {
          stats.delayed += 1;
          send(bytes, Math.floor(random() * (options.maxDelayMs ?? 20)));
        } else {
          send(bytes);
        }
        releaseHeld();
      };

      from.on('data', (chunk: Buffer) => {
        if (ended) return;
        if (raw) {
          to.write(chunk);
          return;
        }
        pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk]);
        if (head) {
          const end = pending.indexOf('\r\n\r\n');
          if (end < 0) return;
          const text = pending.subarray(0, end).toString('latin1');
          raw =
            direction === 'up'
              ? !/^upgrade:\s*websocket/im.test(text)
              : !/^HTTP\/1\.1 101/.test(text);
          if (raw) {
            to.write(pending);
            pending = Buffer.alloc(0);
            return;
          }
          write(pending.subarray(0, end + 4));
          pending = pending.subarray(end + 4);
          head = false;
        }
        for (;;) {
          const parsed = parseFrame(pending, direction);
          if (parsed === undefined) break;
          onFrame(pending.subarray(0, parsed.length), parsed.frame);
          pending = pending.subarray(parsed.length);
        }
      });
      from.on('end', () => to.end());
    };
    pump(downstream, up, 'up');
    pump(up, downstream, 'down');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `ws://127.0.0.1:${(server.address() as AddressInfo).port}`,
    stats,
    setUpstream: (url) => (upstream = new URL(url)),
    calm: () => (calm = true),
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

/** The whole frame at the start of `data` (its length and content), or undefined if incomplete. */
function parseFrame(
  data: Buffer,
  direction: 'up' | 'down',
): { length: number; frame: ChaosFrame } | undefined {
  if (data.length < 2) return undefined;
  const first = data[0]!;
  const second = data[1]!;
  let length = second & 0x7f;
  let offset = 2;
  if (length === 126) {
    if (data.length < 4) return undefined;
    length = data.readUInt16BE(2);
    offset = 4;
  } else if (length === 127) {
    if (data.length < 10) return undefined;
    length = Number(data.readBigUInt64BE(2));
    offset = 10;
  }
  const masked = (second & 0x80) !== 0;
  const keyAt = offset;
  if (masked) offset += 4;
  if (data.length < offset + length) return undefined;
  const payload = Buffer.from(data.subarray(offset, offset + length));
  if (masked) for (let i = 0; i < payload.length; i += 1) payload[i]! ^= data[keyAt + (i & 3)]!;
  return {
    length: offset + length,
    frame: { direction, opcode: first & 0x0f, fin: (first & 0x80) !== 0, payload },
  };
}
