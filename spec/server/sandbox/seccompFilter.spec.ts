/** The network seccomp program, byte for byte and through bwrap. */
import { describe, expect, it } from '@jest/globals';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { networkSeccompFilter } from '../../../src/server/sandbox/seccompFilter.js';

describe('networkSeccompFilter', () => {
  it('is ten sock_filter instructions on x64 and arm64, none elsewhere', () => {
    expect(networkSeccompFilter('x64')?.length).toBe(80);
    expect(networkSeccompFilter('arm64')?.length).toBe(80);
    expect(networkSeccompFilter('ia32')).toBeUndefined();
    const filter = networkSeccompFilter('x64') as Buffer;
    // ld [arch]; jeq AUDIT_ARCH_X86_64; … ; ret ERRNO(EPERM)
    expect(filter.readUInt16LE(0)).toBe(0x20);
    expect(filter.readUInt32LE(4)).toBe(4);
    expect(filter.readUInt32LE(12)).toBe(0xc000003e);
    expect(filter.readUInt32LE(76)).toBe(0x00050001);
  });

  it('under bwrap: inet sockets fail with EPERM, unix sockets work', () => {
    const filter = networkSeccompFilter();
    if (filter === undefined) return; // no filter for this architecture
    const dir = mkdtempSync(join(tmpdir(), 'execrx-seccomp-spec-'));
    try {
      const path = join(dir, 'filter.bpf');
      writeFileSync(path, filter);
      const run = (script: string): string =>
        execFileSync(
          '/bin/sh',
          [
            '-c',
            'exec 3<"$0" && exec "$@"',
            path,
            'bwrap',
            '--ro-bind',
            '/',
            '/',
            '--dev',
            '/dev',
            '--bind',
            dir,
            dir,
            '--seccomp',
            '3',
            '--',
            '/bin/bash',
            '--norc',
            '-c',
            script,
          ],
          { encoding: 'utf8' },
        );
      expect(run('(exec 3<>/dev/tcp/127.0.0.1/9) 2>&1; echo rc=$?')).toContain(
        'socket: Operation not permitted',
      );
      expect(
        run(
          `${process.execPath} -e "require('net').createServer().listen('${join(dir, 's.sock')}', function () { console.log('unix ok'); this.close(); })"`,
        ),
      ).toBe('unix ok\n');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
