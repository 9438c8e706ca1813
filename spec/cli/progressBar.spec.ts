/** The `cp` progress line: bytes, percentage, rate and time left, on terminals only. */
import { describe, expect, it } from '@jest/globals';
import { Writable } from 'node:stream';
import { formatBytes, formatProgress, progressBar } from '../../src/cli/progressBar.js';

function terminal(isTTY: boolean): Writable & { isTTY: boolean; columns: number; text: string } {
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      stream.text += chunk.toString();
      done();
    },
  }) as Writable & { isTTY: boolean; columns: number; text: string };
  stream.isTTY = isTTY;
  stream.columns = 120;
  stream.text = '';
  return stream;
}

describe('progress line', () => {
  it('formats bytes, percentage, rate and time left', () => {
    expect(formatBytes(512)).toBe('512 B');
    expect(formatBytes(3 * 1024 * 1024 + 512 * 1024)).toBe('3.5 MiB');
    expect(formatProgress(10 * 1024 * 1024, 40 * 1024 * 1024, 5, 'big.bin')).toBe(
      '10.0 MiB / 40.0 MiB  25%  2.0 MiB/s  0:15 left  big.bin',
    );
    expect(formatProgress(0, 100, 0, 'a')).toBe('0 B / 100 B  0%  0 B/s  --:-- left  a');
    expect(formatProgress(1024, 3 * 3600 * 1024 + 1024, 1, 'x')).toContain('3:00:00 left');
  });

  it('draws on a terminal at most every 100 ms, and clears its line when done', () => {
    const stderr = terminal(true);
    let clock = 1_000;
    const bar = progressBar(stderr, 1000, () => clock);
    bar.file('a.bin');
    bar.advance(100);
    clock += 50;
    bar.advance(100);
    expect(stderr.text.match(/\x1b\[2K/g)).toHaveLength(1);
    clock += 100;
    bar.advance(100);
    expect(stderr.text).toContain('300 B / 1000 B  30%');
    bar.done();
    expect(stderr.text.endsWith('\r\x1b[2K')).toBe(true);
  });

  it('writes nothing when stderr is not a terminal', () => {
    const stderr = terminal(false);
    const bar = progressBar(stderr, 1000);
    bar.file('a.bin');
    bar.advance(1000);
    bar.done();
    expect(stderr.text).toBe('');
  });
});
