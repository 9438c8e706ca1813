import type { RandomSource } from '../../src/noise/cryptoProvider.js';

/**
 * The vectors' DummyRng: one counter shared by both parties, starting at 0xdeadbeef; each
 * output byte is `counter mod 256` and the counter advances by one per byte.
 */
export function dummyRng(start = 0xdeadbeef): RandomSource & { readonly counter: () => number } {
  let counter = start;
  const random = (length: number): Uint8Array => {
    const out = new Uint8Array(length);
    for (let i = 0; i < length; i++) {
      out[i] = counter & 0xff;
      counter += 1;
    }
    return out;
  };
  return Object.assign(random, { counter: () => counter });
}

export function hex(bytes: Uint8Array): string {
  return Buffer.from(bytes).toString('hex');
}

export function fromHex(text: string): Uint8Array {
  return Uint8Array.from(Buffer.from(text, 'hex'));
}
