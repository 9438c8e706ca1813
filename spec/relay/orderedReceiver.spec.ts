import { describe, expect, it } from '@jest/globals';
import { OrderedCiphertextReceiver, OutboundSequence } from '../../src/relay/orderedReceiver.js';
import { RelayProtocolError } from '../../src/relay/relayProtocolError.js';

const record = (seq: number, size = 1): Uint8Array => new Uint8Array(size).fill(seq % 256);
const seqs = (records: Uint8Array[]): number[] => records.map((r) => r[0]!);

describe('OrderedCiphertextReceiver', () => {
  it('releases in-order records immediately, starting at seq 0', () => {
    const receiver = new OrderedCiphertextReceiver();
    expect(seqs(receiver.push(0, record(0)))).toEqual([0]);
    expect(seqs(receiver.push(1, record(1)))).toEqual([1]);
    expect(receiver.nextSeq).toBe(2);
  });

  it('holds early records and releases the whole contiguous run when the gap closes', () => {
    const receiver = new OrderedCiphertextReceiver();
    expect(receiver.push(1, record(1))).toEqual([]);
    expect(receiver.push(3, record(3))).toEqual([]);
    expect(receiver.pendingRecords).toBe(2);
    expect(seqs(receiver.push(0, record(0)))).toEqual([0, 1]);
    expect(seqs(receiver.push(2, record(2)))).toEqual([2, 3]);
    expect(receiver.pendingRecords).toBe(0);
    expect(receiver.pendingBytes).toBe(0);
    expect(receiver.nextSeq).toBe(4);
  });

  it('ignores duplicates and keeps the first copy', () => {
    const receiver = new OrderedCiphertextReceiver();
    const first = new Uint8Array([1, 0xaa]);
    const second = new Uint8Array([1, 0xbb]);
    expect(receiver.push(1, first)).toEqual([]);
    expect(receiver.push(1, second)).toEqual([]);
    const released = receiver.push(0, record(0));
    expect(released[1]).toBe(first);
    // Already released: too old, silently ignored.
    expect(receiver.push(0, record(0))).toEqual([]);
    expect(receiver.push(1, second)).toEqual([]);
    expect(receiver.nextSeq).toBe(2);
  });

  it('accepts a record exactly 64 ahead and rejects one 65 ahead', () => {
    const receiver = new OrderedCiphertextReceiver();
    expect(receiver.push(64, record(64))).toEqual([]);
    let error: unknown;
    try {
      receiver.push(65, record(65));
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(RelayProtocolError);
    expect((error as RelayProtocolError).detail).toBe(
      'Noise relay ciphertext exceeds reorder window',
    );
  });

  it('moves the window with next_seq', () => {
    const receiver = new OrderedCiphertextReceiver();
    for (let seq = 0; seq < 10; seq++) receiver.push(seq, record(seq));
    expect(receiver.push(74, record(74))).toEqual([]);
    expect(() => receiver.push(75, record(75))).toThrow(
      'Noise relay ciphertext exceeds reorder window',
    );
  });

  it('fills the window with all 64 slots and drains them in order', () => {
    const receiver = new OrderedCiphertextReceiver();
    for (let seq = 64; seq >= 1; seq--) expect(receiver.push(seq, record(seq))).toEqual([]);
    expect(receiver.pendingRecords).toBe(64);
    const released = receiver.push(0, record(0));
    expect(seqs(released)).toEqual(Array.from({ length: 65 }, (_, i) => i));
  });

  it('accepts exactly 1 MiB pending and rejects one byte more', () => {
    const receiver = new OrderedCiphertextReceiver();
    const quarter = 256 * 1024;
    for (let seq = 1; seq <= 4; seq++) receiver.push(seq, record(seq, quarter));
    expect(receiver.pendingBytes).toBe(1024 * 1024);
    expect(() => receiver.push(5, record(5, 1))).toThrow(
      'Noise relay pending ciphertext buffer is full',
    );
    // The expected record is never buffered, so it still goes through.
    expect(seqs(receiver.push(0, record(0, 1)))).toEqual([0, 1, 2, 3, 4]);
  });

  it('honours custom limits', () => {
    const receiver = new OrderedCiphertextReceiver({
      maxReorderDistance: 4,
      maxPendingRecords: 2,
      maxPendingBytes: 100,
    });
    receiver.push(1, record(1));
    receiver.push(2, record(2));
    expect(() => receiver.push(3, record(3))).toThrow(
      'Noise relay pending ciphertext buffer is full',
    );
    expect(() => receiver.push(5, record(5))).toThrow(
      'Noise relay ciphertext exceeds reorder window',
    );
  });

  it('rejects seqs that are not 32-bit unsigned integers', () => {
    const receiver = new OrderedCiphertextReceiver();
    for (const bad of [-1, 1.5, 2 ** 32, Number.NaN]) {
      expect(() => receiver.push(bad, record(0))).toThrow(RelayProtocolError);
    }
  });

  it('errors instead of wrapping when the last sequence number is released', () => {
    const receiver = new OrderedCiphertextReceiver(undefined, 0xffff_fffe);
    expect(receiver.push(0xffff_fffe, record(0)).length).toBe(1);
    expect(() => receiver.push(0xffff_ffff, record(0))).toThrow(
      'Noise relay sequence number exhausted',
    );
  });
});

describe('OutboundSequence', () => {
  it('counts from 0', () => {
    const sequence = new OutboundSequence();
    expect([sequence.take(), sequence.take(), sequence.take()]).toEqual([0, 1, 2]);
    expect(sequence.peek).toBe(3);
  });

  it('never hands out 4294967295', () => {
    const sequence = new OutboundSequence(0xffff_fffe);
    expect(sequence.take()).toBe(0xffff_fffe);
    expect(() => sequence.take()).toThrow('Noise relay sequence number exhausted');
  });
});
