import { describe, expect, it } from '@jest/globals';
import { DenialScanner } from '../../../src/server/sandbox/denialScanner.js';

describe('DenialScanner', () => {
  it('a non-zero exit with a denial word is denied; exit 0 never is', () => {
    const scanner = new DenialScanner();
    scanner.observe(Buffer.from('sh: cannot create x: Read-only file system\n'));
    expect(scanner.denied(2)).toBe(true);
    expect(scanner.denied(0)).toBe(false);
  });

  it('finds a word split across chunks', () => {
    const scanner = new DenialScanner();
    scanner.observe(Buffer.from('socket: Operation not per'));
    scanner.observe(Buffer.from('mitted\n'));
    expect(scanner.denied(1)).toBe(true);
  });

  it('an ordinary failure is not denied; SIGSYS is', () => {
    const scanner = new DenialScanner();
    scanner.observe(Buffer.from('no such thing\n'));
    expect(scanner.denied(1)).toBe(false);
    expect(scanner.denied(127)).toBe(false);
    expect(scanner.denied(159)).toBe(true);
  });
});
