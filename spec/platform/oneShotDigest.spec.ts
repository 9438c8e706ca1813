import { describe, expect, it } from '@jest/globals';
import { createHash } from 'node:crypto';
import { oneShotDigest } from '../../src/platform/node/oneShotDigest.js';
import { hex } from '../noise/dummyRng.js';

describe('oneShotDigest', () => {
  it('equals the streaming createHash digest', () => {
    for (const algorithm of ['sha256', 'sha3-256', 'sha3-512']) {
      for (const length of [0, 1, 64, 1184, 5000]) {
        const data = Uint8Array.from({ length }, (_, i) => (i * 31 + length) & 0xff);
        // A view into a larger buffer: only the viewed bytes are hashed.
        const view = new Uint8Array(length + 8).fill(0xaa).subarray(4, 4 + length);
        view.set(data);
        const expected = createHash(algorithm).update(data).digest('hex');
        expect(hex(oneShotDigest(algorithm, data))).toBe(expected);
        expect(hex(oneShotDigest(algorithm, view))).toBe(expected);
      }
    }
  });
});
