/**
 * The protobuf wire primitives of src/relay/protoWire.ts on the edges prost (codex's codec)
 * draws: varint length and width, field keys, bounds, wire types, UTF-8.
 */
import { describe, expect, it } from '@jest/globals';
import {
  ProtoReader,
  ProtoWireError,
  ProtoWriter,
  WIRE_FIXED32,
  WIRE_FIXED64,
  WIRE_LENGTH_DELIMITED,
  WIRE_VARINT,
} from '../../src/relay/protoWire.js';

const reader = (...bytes: number[]) => new ProtoReader(new Uint8Array(bytes));

describe('ProtoReader', () => {
  it('reads varints as their low 32 bits, up to ten bytes, and no further', () => {
    expect(reader(0x96, 0x01).varint32()).toBe(150);
    expect(reader(0xff, 0xff, 0xff, 0xff, 0x0f).varint32()).toBe(0xffff_ffff);
    // 2^32 + 5 in a uint32 field keeps its low 32 bits, as prost's `as u32` does.
    expect(reader(0x85, 0x80, 0x80, 0x80, 0x10).varint32()).toBe(5);
    const ten = [0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01];
    expect(reader(...ten).varint32()).toBe(0);
    expect(() => reader(...ten.slice(0, 9), 0x80, 0x01).varint32()).toThrow(
      'varint longer than ten bytes',
    );
    expect(() => reader(0x80, 0x80).varint32()).toThrow('premature end of input in a varint');
  });

  it('reads a field key, refusing field 0 and keys of 32 bits or more', () => {
    expect(reader(0x12).key()).toEqual({ field: 2, wireType: WIRE_LENGTH_DELIMITED });
    expect(reader(0x80, 0x08).key()).toEqual({ field: 128, wireType: WIRE_VARINT });
    expect(() => reader(0x02).key()).toThrow('field number 0 is illegal');
    expect(() => reader(0x88, 0x80, 0x80, 0x80, 0x10).key()).toThrow(
      'field key larger than 32 bits',
    );
  });

  it('bounds a length-delimited field by the input it reads, and returns a view', () => {
    const input = new Uint8Array([0x02, 0x61, 0x62, 0x63]);
    const bytes = new ProtoReader(input).bytesField();
    expect(Array.from(bytes)).toEqual([0x61, 0x62]);
    expect(bytes.buffer).toBe(input.buffer);
    expect(() => new ProtoReader(input, 0, 2).bytesField()).toThrow(
      'premature end of input in a length-delimited field',
    );
  });

  it('skips every wire type but groups, within bounds', () => {
    const skipped = reader(0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08);
    skipped.skip(WIRE_FIXED64);
    expect(skipped.done).toBe(true);
    expect(() => reader(0x01, 0x02, 0x03).skip(WIRE_FIXED32)).toThrow('premature end of input');
    expect(() => reader().skip(3)).toThrow('unsupported wire type 3');
    expect(() => reader().skip(7)).toThrow('unsupported wire type 7');
  });

  it('refuses a string that is not UTF-8 and a field under another wire type', () => {
    expect(reader(0x02, 0xc3, 0xa9).stringField()).toBe('é');
    expect(() => reader(0x02, 0xff, 0xfe).stringField()).toThrow('string field is not valid utf-8');
    expect(() => reader().expect(1, WIRE_FIXED64, WIRE_VARINT)).toThrow(ProtoWireError);
  });
});

describe('ProtoWriter', () => {
  it('leaves out zero uint32 fields, keeps empty length-delimited ones, in the order added', () => {
    const bytes = new ProtoWriter()
      .uint32(1, 1)
      .uint32(3, 0)
      .string(2, 'ab')
      .bytes(7, new Uint8Array())
      .uint32(16, 300)
      .finish();
    expect(Array.from(bytes)).toEqual([
      0x08, 0x01, 0x12, 0x02, 0x61, 0x62, 0x3a, 0x00, 0x80, 0x01, 0xac, 0x02,
    ]);
  });

  it('writes what the reader reads back, up to 2^32 - 1', () => {
    const bytes = new ProtoWriter().uint32(1, 0xffff_ffff).finish();
    const read = new ProtoReader(bytes);
    expect(read.key()).toEqual({ field: 1, wireType: WIRE_VARINT });
    expect(read.varint32()).toBe(0xffff_ffff);
    expect(read.done).toBe(true);
  });

  it('writes a prefix as the key and length of a field whose value follows it', () => {
    const value = Uint8Array.from([1, 2, 3]);
    const head = new ProtoWriter().uint32(1, 5).prefix(4, value.length).finish();
    expect(
      Buffer.concat([head, value]).equals(new ProtoWriter().uint32(1, 5).bytes(4, value).finish()),
    ).toBe(true);
    expect(Array.from(new ProtoWriter().prefix(5, 300).finish())).toEqual([0x2a, 0xac, 0x02]);
  });
});
