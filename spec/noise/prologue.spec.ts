import { describe, expect, it } from '@jest/globals';
import { prologue } from '../../src/noise/index.js';
import { hex } from './dummyRng.js';

describe('prologue', () => {
  it('is stable and unambiguous (prologue_encoding_is_stable_and_unambiguous)', () => {
    const bytes = prologue({
      environmentId: 'env-1',
      executorRegistrationId: 'registration-1',
      streamId: 'stream-1',
    });
    expect(bytes).toHaveLength(91);
    expect(hex(bytes)).toBe(
      '0000000000000020' +
        '636f6465782d657865632d7365727665722d72656c61792d6e6f6973652f7631' +
        '0000000000000005' +
        '656e762d31' +
        '000000000000000e' +
        '726567697374726174696f6e2d31' +
        '0000000000000008' +
        '73747265616d2d31',
    );
  });

  it('length-prefixes each part so shifted boundaries differ', () => {
    const a = prologue({ environmentId: 'ab', executorRegistrationId: 'c', streamId: 's' });
    const b = prologue({ environmentId: 'a', executorRegistrationId: 'bc', streamId: 's' });
    expect(hex(a)).not.toBe(hex(b));
  });

  it('counts UTF-8 bytes, not characters', () => {
    const bytes = prologue({ environmentId: 'é', executorRegistrationId: '', streamId: '' });
    expect(hex(bytes.subarray(40, 50))).toBe('0000000000000002c3a9');
  });
});
