import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync, realpathSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { bwrapArguments, writableRoots } from '../../../src/server/sandbox/bwrapArguments.js';
import {
  sandboxPlan,
  type FileSystemPolicy,
} from '../../../src/server/sandbox/permissionProfile.js';
import {
  context,
  special,
  workspaceWrite as workspaceWriteContext,
  type Entry,
} from '../../support/sandboxProfiles.js';

let base: string;
let lab: string;

beforeAll(() => {
  base = realpathSync(mkdtempSync(join(tmpdir(), 'execrx-bwrap-args-')));
  lab = join(base, 'lab');
  mkdirSync(join(lab, '.git'), { recursive: true });
  mkdirSync(join(base, 'decoy'));
  symlinkSync(join(base, 'decoy'), join(lab, '.agents'));
  mkdirSync(join(base, 'denied'));
  writeFileSync(join(base, 'denied-file'), 'x');
});

afterAll(() => rmSync(base, { recursive: true, force: true }));

function policy(entries: Entry[]): FileSystemPolicy {
  const plan = sandboxPlan(context(lab, entries), lab, '/nonexistent-tmpdir');
  if (plan.kind !== 'confined') throw new Error('expected confined');
  return plan.fileSystem;
}

const workspaceWrite = (extra: Entry[] = []): FileSystemPolicy => {
  const plan = sandboxPlan(workspaceWriteContext(lab, extra), lab, '/nonexistent-tmpdir');
  if (plan.kind !== 'confined') throw new Error('expected confined');
  return plan.fileSystem;
};

describe('writableRoots', () => {
  it('lists existing writable roots sorted, each with the protected names as carve-outs', () => {
    const roots = writableRoots(workspaceWrite());
    expect(roots.map((root) => root.root)).toEqual([lab, '/tmp'].sort());
    const labRoot = roots.find((root) => root.root === lab);
    expect(labRoot?.carveOuts).toEqual(
      ['.agents', '.aws', '.codex', '.git'].map((name) => join(lab, name)),
    );
    const tmpRoot = roots.find((root) => root.root === '/tmp');
    expect(tmpRoot?.carveOuts).toEqual(
      expect.arrayContaining(['/tmp/.agents', '/tmp/.aws', '/tmp/.codex', '/tmp/.git']),
    );
  });

  it('skips a writable root that does not exist (tmpdir here)', () => {
    expect(writableRoots(workspaceWrite()).some((root) => root.root.includes('nonexistent'))).toBe(
      false,
    );
  });

  it('an explicit write entry on a protected name lifts its protection', () => {
    const roots = writableRoots(
      workspaceWrite([{ path: special('project_roots', '.codex'), access: 'write' }]),
    );
    const labRoot = roots.find((root) => root.root === lab);
    expect(labRoot?.carveOuts).not.toContain(join(lab, '.codex'));
  });
});

describe('bwrapArguments', () => {
  it('lays out the workspace-write view as the binary does', () => {
    const { args, syntheticTargets } = bwrapArguments(workspaceWrite(), 'restricted', 'isolate');
    const labArgs = [
      '--bind',
      lab,
      lab,
      // .agents is a symlink inside the writable root: /dev/null is bound over it
      '--ro-bind',
      '/dev/null',
      join(lab, '.agents'),
      '--perms',
      '555',
      '--tmpfs',
      join(lab, '.aws'),
      '--remount-ro',
      join(lab, '.aws'),
      '--perms',
      '555',
      '--tmpfs',
      join(lab, '.codex'),
      '--remount-ro',
      join(lab, '.codex'),
      '--ro-bind',
      join(lab, '.git'),
      join(lab, '.git'),
    ];
    expect(args.slice(0, 6)).toEqual([
      '--new-session',
      '--die-with-parent',
      '--ro-bind',
      '/',
      '/',
      '--dev',
    ]);
    expect(args.join(' ')).toContain(labArgs.join(' '));
    expect(args.slice(-8)).toEqual([
      '--unshare-user',
      '--unshare-pid',
      '--unshare-ipc',
      '--unshare-net',
      '--proc',
      '/proc',
      '--cap-drop',
      'ALL',
    ]);
    expect(syntheticTargets).toEqual(
      expect.arrayContaining([join(lab, '.aws'), join(lab, '.codex')]),
    );
  });

  it('inherit mode has no PID namespace and no /proc; network enabled keeps the host network', () => {
    const { args } = bwrapArguments(workspaceWrite(), 'enabled', 'inherit');
    expect(args).not.toContain('--unshare-pid');
    expect(args).not.toContain('--proc');
    expect(args).not.toContain('--unshare-net');
    expect(args).toContain('--unshare-user');
    expect(
      bwrapArguments(workspaceWrite(), 'enabled', 'inherit', undefined, false).args,
    ).not.toContain('--new-session');
  });

  it('masks denied paths: a directory with an empty 000 tmpfs, a file with /dev/null', () => {
    const { args } = bwrapArguments(
      policy([
        { path: special('root'), access: 'read' },
        { path: { type: 'path', path: `file://${join(base, 'denied')}` }, access: 'deny' },
        { path: { type: 'path', path: `file://${join(base, 'denied-file')}` }, access: 'deny' },
        { path: { type: 'path', path: `file://${join(base, 'missing')}` }, access: 'deny' },
      ]),
      'restricted',
      'isolate',
    );
    const text = args.join(' ');
    expect(text).toContain(
      `--perms 000 --tmpfs ${join(base, 'denied')} --remount-ro ${join(base, 'denied')}`,
    );
    expect(text).toContain(`--ro-bind /dev/null ${join(base, 'denied-file')}`);
    expect(text).not.toContain(join(base, 'missing'));
  });

  it('full-disk write binds / read-write and only isolates', () => {
    const { args } = bwrapArguments(
      policy([{ path: special('root'), access: 'write' }]),
      'restricted',
      'isolate',
    );
    expect(args.slice(0, 7)).toEqual([
      '--new-session',
      '--die-with-parent',
      '--bind',
      '/',
      '/',
      '--dev',
      '/dev',
    ]);
    expect(args).toContain('--unshare-net');
  });

  it('without root read the view starts empty and binds only the readable entries', () => {
    const { args } = bwrapArguments(
      policy([
        { path: { type: 'path', path: 'file:///usr' }, access: 'read' },
        { path: special('project_roots'), access: 'write' },
      ]),
      'restricted',
      'isolate',
    );
    expect(args.slice(2, 7)).toEqual(['--tmpfs', '/', '--ro-bind', '/usr', '/usr']);
    expect(args.join(' ')).toContain(`--bind ${lab} ${lab}`);
  });
});
