import { describe, expect, it } from '@jest/globals';
import { from, lastValueFrom, toArray } from 'rxjs';
import {
  MAX_NOISE_JSONRPC_MESSAGE_LEN,
  MessageReassembler,
  NOISE_RECORD_PLAINTEXT_LEN,
  frameMessage,
  messageToRecords,
  reassembleMessages,
  splitIntoRecords,
} from '../../src/relay/messageFraming.js';
import { RelayProtocolError } from '../../src/relay/relayProtocolError.js';
import { hex, toHex, vector } from './vector.js';

const text = new TextDecoder();
const utf8 = new TextEncoder();

function prefix(length: number): Uint8Array {
  const bytes = new Uint8Array(4);
  new DataView(bytes.buffer).setUint32(0, length, false);
  return bytes;
}

function concat(...parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let offset = 0;
  for (const part of parts) {
    out.set(part, offset);
    offset += part.length;
  }
  return out;
}

/** A JSON-RPC message of exactly `size` bytes with recognisable content. */
function messageOfSize(size: number, seed = 0): string {
  const head = `{"id":${seed},"result":"`;
  const tail = '"}';
  const alphabet = 'abcdefghijklmnopqrstuvwxyz';
  const fillLength = size - head.length - tail.length;
  const rotated = alphabet.slice(seed % 26) + alphabet.slice(0, seed % 26);
  const fill = rotated.repeat(Math.ceil(fillLength / 26)).slice(0, fillLength);
  return head + fill + tail;
}

describe('frameMessage', () => {
  it('matches the plaintext records of the codex vector', () => {
    for (const record of vector.transport) {
      expect(toHex(frameMessage(record.plaintext_json))).toBe(record.plaintext_record_hex);
      expect(toHex(frameMessage(utf8.encode(record.plaintext_json)))).toBe(
        record.plaintext_record_hex,
      );
    }
  });

  it('refuses empty messages and messages over 64 MiB', () => {
    expect(() => frameMessage('')).toThrow(RelayProtocolError);
    const tooBig = new Uint8Array(MAX_NOISE_JSONRPC_MESSAGE_LEN + 1);
    expect(() => frameMessage(tooBig)).toThrow(
      'Noise relay JSON-RPC message exceeds maximum length',
    );
  });

  it('accepts a message of exactly 64 MiB', () => {
    const framed = frameMessage(new Uint8Array(MAX_NOISE_JSONRPC_MESSAGE_LEN));
    expect(toHex(framed.subarray(0, 4))).toBe('04000000');
  });
});

describe('messageToRecords', () => {
  it('cuts a 150 KB message into three records of at most 61440 bytes', () => {
    const records = messageToRecords(messageOfSize(150_000));
    expect(records.map((r) => r.length)).toEqual([61440, 61440, 150_004 - 2 * 61440]);
  });

  it('fills records exactly at the boundary', () => {
    expect(messageToRecords(messageOfSize(NOISE_RECORD_PLAINTEXT_LEN - 4)).length).toBe(1);
    expect(
      messageToRecords(messageOfSize(NOISE_RECORD_PLAINTEXT_LEN - 3)).map((r) => r.length),
    ).toEqual([NOISE_RECORD_PLAINTEXT_LEN, 1]);
  });

  it('equals splitting the framed message, for sizes around the record boundaries', () => {
    for (const size of [1, 61435, 61436, 61437, 122876, 122877, 200_000]) {
      const json = utf8.encode(messageOfSize(Math.max(size, 20), size));
      const expected = splitIntoRecords(frameMessage(json));
      const actual = messageToRecords(json);
      expect(actual.map((r) => r.length)).toEqual(expected.map((r) => r.length));
      actual.forEach((record, i) => expect(Buffer.compare(record, expected[i]!)).toBe(0));
    }
    expect(() => messageToRecords('')).toThrow(RelayProtocolError);
    expect(() => messageToRecords(new Uint8Array(MAX_NOISE_JSONRPC_MESSAGE_LEN + 1))).toThrow(
      'Noise relay JSON-RPC message exceeds maximum length',
    );
  });

  it('splitIntoRecords yields nothing for nothing', () => {
    expect(splitIntoRecords(new Uint8Array())).toEqual([]);
  });
});

describe('MessageReassembler', () => {
  it('reassembles the vector record', () => {
    const [record] = vector.transport;
    const [message, ...rest] = new MessageReassembler().push(hex(record!.plaintext_record_hex));
    expect(rest).toEqual([]);
    expect(text.decode(message)).toBe(record!.plaintext_json);
  });

  it('reassembles a 128 KiB message chunked at 61440 bytes, only after the last record', () => {
    const json = messageOfSize(128 * 1024);
    const records = messageToRecords(json);
    expect(records.length).toBe(3);
    const reassembler = new MessageReassembler();
    expect(reassembler.push(records[0]!)).toEqual([]);
    expect(reassembler.push(records[1]!)).toEqual([]);
    expect(reassembler.bufferedBytes).toBe(2 * 61440);
    const done = reassembler.push(records[2]!);
    expect(done.map((m) => text.decode(m))).toEqual([json]);
    expect(reassembler.bufferedBytes).toBe(0);
  });

  it('yields every message of a record holding many small ones', () => {
    const messages = Array.from({ length: 50 }, (_, i) => messageOfSize(40 + i, i));
    const record = concat(...messages.map((m) => frameMessage(m)));
    expect(record.length).toBeLessThanOrEqual(NOISE_RECORD_PLAINTEXT_LEN);
    const out = new MessageReassembler().push(record);
    expect(out.map((m) => text.decode(m))).toEqual(messages);
  });

  it('handles a record that ends one message and starts the next, and split length prefixes', () => {
    const a = messageOfSize(100, 1);
    const b = messageOfSize(70_000, 2);
    const c = messageOfSize(30, 3);
    const stream = concat(frameMessage(a), frameMessage(b), frameMessage(c));
    // Cut at awkward places: inside a's prefix, inside b's prefix, in the middle of b.
    const cuts = [2, 104 + 3, 104 + 4 + 61_000, stream.length - 1, stream.length];
    const reassembler = new MessageReassembler();
    const seen: string[][] = [];
    let start = 0;
    for (const cut of cuts) {
      seen.push(reassembler.push(stream.subarray(start, cut)).map((m) => text.decode(m)));
      start = cut;
    }
    expect(seen).toEqual([[], [a], [], [b], [c]]);
  });

  it('gives the same messages whatever the record size', () => {
    const messages = [messageOfSize(10, 1), messageOfSize(5000, 2), messageOfSize(9, 3)];
    const stream = concat(...messages.map((m) => frameMessage(m)));
    for (const size of [1, 3, 4, 5, 777, 61440]) {
      const reassembler = new MessageReassembler();
      const out = splitIntoRecords(stream, size).flatMap((r) => reassembler.push(r));
      expect(out.map((m) => text.decode(m))).toEqual(messages);
    }
  });

  it('rejects a record longer than 61440 bytes', () => {
    const reassembler = new MessageReassembler();
    expect(() => reassembler.push(new Uint8Array(NOISE_RECORD_PLAINTEXT_LEN + 1))).toThrow(
      'Noise relay plaintext record exceeds maximum length',
    );
  });

  it('rejects a declared length over 64 MiB from the 4 prefix bytes alone', () => {
    const reassembler = new MessageReassembler();
    expect(() => reassembler.push(prefix(MAX_NOISE_JSONRPC_MESSAGE_LEN + 1))).toThrow(
      'exec-server protocol error: Noise relay JSON-RPC message has invalid length',
    );
    // The stream is dead: later records fail the same way instead of being misparsed.
    expect(() => reassembler.push(frameMessage('{}'))).toThrow(
      'Noise relay JSON-RPC message has invalid length',
    );
  });

  it('rejects a zero length prefix, even after whole messages in the same record', () => {
    const reassembler = new MessageReassembler();
    expect(() => reassembler.push(concat(frameMessage('{}'), prefix(0)))).toThrow(
      RelayProtocolError,
    );
  });

  it('accepts a message of exactly 64 MiB split into 61440-byte records', () => {
    const body = new Uint8Array(MAX_NOISE_JSONRPC_MESSAGE_LEN);
    body[0] = 0x7b;
    body[body.length - 1] = 0x7d;
    const records = messageToRecords(body);
    expect(records.length).toBe(Math.ceil((MAX_NOISE_JSONRPC_MESSAGE_LEN + 4) / 61440));
    const reassembler = new MessageReassembler();
    const out = records.flatMap((r) => reassembler.push(r));
    expect(out.length).toBe(1);
    expect(out[0]!.length).toBe(MAX_NOISE_JSONRPC_MESSAGE_LEN);
    expect(out[0]![0]).toBe(0x7b);
    expect(out[0]![MAX_NOISE_JSONRPC_MESSAGE_LEN - 1]).toBe(0x7d);
  });
});

describe('reassembleMessages operator', () => {
  it('emits whole messages and gives each subscription a fresh reassembler', async () => {
    const messages = [messageOfSize(70_000, 1), messageOfSize(20, 2)];
    const records = messages.flatMap((m) => messageToRecords(m));
    const messages$ = from(records).pipe(reassembleMessages());
    for (let round = 0; round < 2; round++) {
      const out = await lastValueFrom(messages$.pipe(toArray()));
      expect(out.map((m) => text.decode(m))).toEqual(messages);
    }
  });

  it('errors with RelayProtocolError on a bad record', async () => {
    const messages$ = from([frameMessage('{}'), prefix(0)]).pipe(reassembleMessages());
    await expect(lastValueFrom(messages$)).rejects.toBeInstanceOf(RelayProtocolError);
  });
});
