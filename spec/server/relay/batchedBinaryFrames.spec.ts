import { describe, expect, it } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { PassThrough, Writable } from 'node:stream';
import { BatchedBinaryFrames } from '../../../src/server/relay/batchedBinaryFrames.js';

/** Parses unmasked, unfragmented Binary frames (RFC 6455 §5.2) back into their payloads. */
function parseFrames(bytes: Buffer): Buffer[] {
  const payloads: Buffer[] = [];
  let at = 0;
  while (at < bytes.length) {
    expect(bytes[at]).toBe(0x82); // FIN, Binary
    const short = bytes[at + 1]!;
    expect(short & 0x80).toBe(0); // not masked
    let length = short;
    let header = 2;
    if (short === 126) {
      length = bytes.readUInt16BE(at + 2);
      header = 4;
    } else if (short === 127) {
      length = Number(bytes.readBigUInt64BE(at + 2));
      header = 10;
    }
    payloads.push(bytes.subarray(at + header, at + header + length));
    at += header + length;
  }
  return payloads;
}

function expectPayloads(written: Buffer[], payloads: Buffer[]): void {
  const parsed = parseFrames(Buffer.concat(written));
  expect(parsed.map((payload) => payload.length)).toEqual(payloads.map((p) => p.length));
  parsed.forEach((payload, index) => expect(payload.equals(payloads[index]!)).toBe(true));
}

/**
 * A socket that keeps the very buffers it was given (no copy) and completes each write only
 * on a later turn, so a buffer reused too early would show up as overwritten frames.
 */
function slowSocket(writes: Buffer[]): Writable {
  return new Writable({
    highWaterMark: 1,
    write(chunk: Buffer, _encoding, done) {
      writes.push(chunk);
      setTimeout(done, 5);
    },
  });
}

function setup(open = () => true, slow = false) {
  const writes: Buffer[] = [];
  const raw = slow ? slowSocket(writes) : new PassThrough();
  if (raw instanceof PassThrough) raw.on('data', (chunk: Buffer) => writes.push(chunk));
  let unsent = 0;
  const frames = new BatchedBinaryFrames({
    raw,
    get open() {
      return open();
    },
    writing: (bytes) => (unsent += bytes),
    written: (bytes, error) => {
      expect(error).toBeFalsy();
      unsent -= bytes;
    },
  });
  const send = (payload: Buffer): void => {
    const target = frames.frameBuffer(payload.length);
    expect(target.length).toBe(payload.length);
    payload.copy(target);
    frames.sendFrame(target);
  };
  const settled = () => new Promise((resolve) => setTimeout(resolve, slow ? 100 : 0));
  return { frames, writes, send, settled, unsent: () => unsent };
}

describe('BatchedBinaryFrames', () => {
  it('writes frames back to back, four sealed records per socket write, with exact headers', async () => {
    const { frames, writes, send, settled, unsent } = setup();
    const payloads = [
      ...Array.from({ length: 9 }, () => randomBytes(61_600)),
      randomBytes(1),
      randomBytes(125),
      randomBytes(126),
      randomBytes(65_535),
    ];
    for (const payload of payloads) send(payload);
    frames.flush();
    await settled();
    expect(writes.length).toBeLessThanOrEqual(5);
    expect(writes[0]!.length).toBe(4 * (4 + 61_600));
    expectPayloads(writes, payloads);
    expect(unsent()).toBe(0);
  });

  it('gives a frame larger than a slab a write of its own, after the frames before it', async () => {
    const { frames, writes, send, settled } = setup();
    const payloads = [randomBytes(100), randomBytes(300_000), randomBytes(200)];
    for (const payload of payloads) send(payload);
    frames.flush();
    await settled();
    expect(writes).toHaveLength(3);
    expectPayloads(writes, payloads);
    expect(writes[1]!.subarray(0, 2)).toEqual(Buffer.from([0x82, 127]));
  });

  it('reuses a buffer only once its write has completed', async () => {
    const { frames, writes, send, settled, unsent } = setup(() => true, true);
    const payloads = Array.from({ length: 24 }, () => randomBytes(61_600));
    for (const [index, payload] of payloads.entries()) {
      send(payload);
      if (index % 4 === 3) frames.flush(); // one batch per four records, all in flight at once
    }
    expect(unsent()).toBe(24 * (4 + 61_600));
    await settled();
    expect(writes).toHaveLength(6);
    expectPayloads(writes, payloads);
    expect(unsent()).toBe(0);
  });

  it('writes nothing once the WebSocket has left the OPEN state', async () => {
    let open = true;
    const { frames, writes, send, settled, unsent } = setup(() => open);
    send(randomBytes(10));
    open = false;
    send(randomBytes(10));
    frames.flush();
    await settled();
    expect(writes).toEqual([]);
    expect(unsent()).toBe(0);
  });
});
