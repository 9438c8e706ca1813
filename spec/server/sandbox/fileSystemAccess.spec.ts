import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RpcFailure } from '../../../src/server/rpcFailure.js';
import { checkAccess, enforceFileSandbox } from '../../../src/server/sandbox/fileSystemAccess.js';
import {
  sandboxPlan,
  type FileSystemPolicy,
} from '../../../src/server/sandbox/permissionProfile.js';

let base: string;
let lab: string;
let ww: Record<string, unknown>;
let policy: FileSystemPolicy;

const special = (kind: string, subpath?: string) => ({
  type: 'special',
  value: subpath === undefined ? { kind } : { kind, subpath },
});

beforeAll(() => {
  base = realpathSync(mkdtempSync(join(tmpdir(), 'execrx-fs-access-')));
  lab = join(base, 'lab');
  mkdirSync(join(lab, '.git'), { recursive: true });
  mkdirSync(join(base, 'outside'));
  symlinkSync(join(base, 'outside'), join(lab, 'escape'));
  ww = {
    permissions: {
      type: 'managed',
      file_system: {
        type: 'restricted',
        entries: [
          { path: special('root'), access: 'read' },
          { path: special('project_roots'), access: 'write' },
          { path: { type: 'path', path: `file://${join(lab, 'private')}` }, access: 'deny' },
        ],
      },
      network: 'restricted',
    },
    cwd: `file://${lab}`,
    windowsSandboxLevel: 'disabled',
  };
  const plan = sandboxPlan(ww, lab);
  if (plan.kind !== 'confined') throw new Error('expected confined');
  policy = plan.fileSystem;
});

afterAll(() => rmSync(base, { recursive: true, force: true }));

function outcome(run: () => void): string {
  try {
    run();
    return 'ok';
  } catch (error) {
    if (error instanceof RpcFailure) return `${error.code} ${error.message}`;
    throw error;
  }
}

const EROFS = '-32603 Read-only file system (os error 30)';
const EACCES = '-32600 Permission denied (os error 13)';

describe('checkAccess', () => {
  it('writes inside a writable root pass, outside and in carve-outs fail with EROFS', () => {
    expect(outcome(() => checkAccess(policy, join(lab, 'new', 'file'), 'write'))).toBe('ok');
    expect(outcome(() => checkAccess(policy, join(base, 'outside', 'f'), 'write'))).toBe(EROFS);
    expect(outcome(() => checkAccess(policy, join(lab, '.git', 'config'), 'write'))).toBe(EROFS);
    expect(outcome(() => checkAccess(policy, join(lab, '.codex', 'x'), 'write'))).toBe(EROFS);
  });

  it('resolves symlinks before deciding, as the kernel would in the view', () => {
    expect(outcome(() => checkAccess(policy, join(lab, 'escape', 'f'), 'write'))).toBe(EROFS);
    // Removing the link itself (no final follow) is a write inside the root.
    expect(outcome(() => checkAccess(policy, join(lab, 'escape'), 'write', false))).toBe('ok');
  });

  it('denied paths fail reads and writes with EACCES', () => {
    expect(outcome(() => checkAccess(policy, join(lab, 'private', 'key'), 'read'))).toBe(EACCES);
    expect(outcome(() => checkAccess(policy, join(lab, 'private', 'key'), 'write'))).toBe(EACCES);
    expect(outcome(() => checkAccess(policy, '/etc/hostname', 'read'))).toBe('ok');
  });
});

describe('enforceFileSandbox', () => {
  it('does nothing for null or an unconfined profile', () => {
    expect(outcome(() => enforceFileSandbox(null, '/etc/x', 'write'))).toBe('ok');
    expect(
      outcome(() =>
        enforceFileSandbox(
          { permissions: { type: 'disabled' }, windowsSandboxLevel: 'disabled' },
          '/etc/x',
          'write',
        ),
      ),
    ).toBe('ok');
  });

  it('applies a confined profile', () => {
    expect(outcome(() => enforceFileSandbox(ww, '/etc/x', 'write'))).toBe(EROFS);
  });
});
