import { describe, expect, it } from '@jest/globals';
import { RpcFailure } from '../../../src/server/rpcFailure.js';
import {
  accessAt,
  hasFullDiskWrite,
  hasRootRead,
  sandboxPlan,
  type FileSystemPolicy,
} from '../../../src/server/sandbox/permissionProfile.js';

const special = (kind: string, subpath?: string) => ({
  type: 'special',
  value: subpath === undefined ? { kind } : { kind, subpath },
});
const context = (permissions: unknown, extra: Record<string, unknown> = {}) => ({
  permissions,
  cwd: 'file:///work/lab',
  workspaceRoots: ['file:///work/lab', 'file:///work/other'],
  windowsSandboxLevel: 'disabled',
  ...extra,
});
const managed = (entries: unknown[], network = 'restricted') => ({
  type: 'managed',
  file_system: { type: 'restricted', entries },
  network,
});

function failure(run: () => unknown): { code: number; message: string } {
  try {
    run();
  } catch (error) {
    if (error instanceof RpcFailure) return { code: error.code, message: error.message };
    throw error;
  }
  throw new Error('expected an RpcFailure');
}

function restricted(plan: ReturnType<typeof sandboxPlan>): FileSystemPolicy {
  if (plan.kind !== 'confined') throw new Error(`expected confined, got ${plan.kind}`);
  return plan.fileSystem;
}

describe('sandboxPlan', () => {
  it('null and absent mean no sandbox', () => {
    expect(sandboxPlan(null, '/')).toEqual({ kind: 'none' });
    expect(sandboxPlan(undefined, '/')).toEqual({ kind: 'none' });
  });

  it('disabled and external profiles, and full access with network, confine nothing', () => {
    expect(sandboxPlan(context({ type: 'disabled' }), '/')).toEqual({ kind: 'unconfined' });
    expect(sandboxPlan(context({ type: 'external', network: 'restricted' }), '/')).toEqual({
      kind: 'unconfined',
    });
    expect(
      sandboxPlan(
        context({ type: 'managed', file_system: { type: 'unrestricted' }, network: 'enabled' }),
        '/',
      ),
    ).toEqual({ kind: 'unconfined' });
    expect(
      sandboxPlan(context(managed([{ path: special('root'), access: 'write' }], 'enabled')), '/'),
    ).toEqual({ kind: 'unconfined' });
  });

  it('full access with restricted network is still confined (network only)', () => {
    const plan = sandboxPlan(context(managed([{ path: special('root'), access: 'write' }])), '/');
    expect(plan.kind).toBe('confined');
    expect(hasFullDiskWrite(restricted(plan))).toBe(true);
  });

  it('resolves special paths: project_roots per workspace root, subpaths, slash_tmp, tmpdir', () => {
    const policy = restricted(
      sandboxPlan(
        context(
          managed([
            { path: special('root'), access: 'read' },
            { path: special('project_roots'), access: 'write' },
            { path: special('project_roots', '.git'), access: 'read' },
            { path: special('slash_tmp'), access: 'write' },
            { path: special('tmpdir'), access: 'write' },
            { path: special('minimal'), access: 'read' },
            { path: special('some_future_kind'), access: 'write' },
          ]),
        ),
        '/',
        '/var/tmp/mine',
      ),
    );
    expect(policy.kind === 'restricted' && policy.entries.map((e) => [e.path, e.access])).toEqual([
      ['/', 'read'],
      ['/work/lab', 'write'],
      ['/work/other', 'write'],
      ['/work/lab/.git', 'read'],
      ['/work/other/.git', 'read'],
      ['/tmp', 'write'],
      ['/var/tmp/mine', 'write'],
    ]);
  });

  it('without workspaceRoots the cwd is the project root; without cwd the fallback', () => {
    const policy = restricted(
      sandboxPlan(
        {
          permissions: managed([{ path: special('project_roots'), access: 'write' }]),
          windowsSandboxLevel: 'disabled',
        },
        '/srv/app',
      ),
    );
    expect(policy.kind === 'restricted' && policy.entries[0]?.path).toBe('/srv/app');
  });

  it('a relative TMPDIR or none adds no entry', () => {
    const entries = [{ path: special('tmpdir'), access: 'write' }];
    for (const tmpdir of ['relative/dir', undefined]) {
      const saved = process.env.TMPDIR;
      delete process.env.TMPDIR;
      try {
        const policy = restricted(sandboxPlan(context(managed(entries)), '/', tmpdir));
        expect(policy.kind === 'restricted' && policy.entries).toEqual([]);
      } finally {
        if (saved !== undefined) process.env.TMPDIR = saved;
      }
    }
  });

  it('words malformed contexts as serde does (-32602)', () => {
    expect(failure(() => sandboxPlan({}, '/'))).toEqual({
      code: -32602,
      message: 'missing field `permissions`',
    });
    expect(failure(() => sandboxPlan({ permissions: { type: 'disabled' } }, '/'))).toEqual({
      code: -32602,
      message: 'missing field `windowsSandboxLevel`',
    });
    expect(failure(() => sandboxPlan(context({ type: 'sideways' }), '/')).message).toBe(
      'unknown variant `sideways`, expected one of `managed`, `disabled`, `external`',
    );
    expect(
      failure(() =>
        sandboxPlan(
          context(
            managed([{ path: special('root'), access: 'read', missing_path_behavior: 'create' }]),
          ),
          '/',
        ),
      ).message,
    ).toBe('unknown variant `create`, expected `skip`');
    expect(
      failure(() =>
        sandboxPlan(
          context(managed([{ path: { type: 'path', path: '/etc' }, access: 'read' }])),
          '/',
        ),
      ).message,
    ).toBe('invalid URI: relative URL without a base');
    expect(
      failure(() => sandboxPlan(context(managed([{ path: special('root') }])), '/')).message,
    ).toBe('missing field `access`');
  });

  it('fails closed on glob patterns it cannot apply', () => {
    expect(
      failure(() =>
        sandboxPlan(
          context(
            managed([
              { path: special('root'), access: 'read' },
              { path: { type: 'glob_pattern', pattern: '**/*.env' }, access: 'deny' },
            ]),
          ),
          '/',
        ),
      ).code,
    ).toBe(-32602);
  });
});

describe('accessAt', () => {
  const policy = restricted(
    sandboxPlan(
      context(
        managed([
          { path: special('root'), access: 'read' },
          { path: { type: 'path', path: 'file:///work' }, access: 'write' },
          { path: { type: 'path', path: 'file:///work/lab/.git' }, access: 'read' },
          { path: { type: 'path', path: 'file:///work/secret' }, access: 'deny' },
          { path: { type: 'path', path: 'file:///work/both' }, access: 'read' },
          { path: { type: 'path', path: 'file:///work/both' }, access: 'write' },
          { path: { type: 'path', path: 'file:///work/x' }, access: 'none' },
        ]),
      ),
      '/',
    ),
  );

  it('takes the most specific entry, ties ranked deny > write > read', () => {
    expect(accessAt(policy, '/etc/passwd')).toBe('read');
    expect(accessAt(policy, '/work/lab/file')).toBe('write');
    expect(accessAt(policy, '/work/lab/.git/config')).toBe('read');
    expect(accessAt(policy, '/work/secret/key')).toBe('deny');
    expect(accessAt(policy, '/work/both/f')).toBe('write');
    expect(accessAt(policy, '/work/x')).toBe('deny');
    expect(accessAt(policy, '/workshop')).toBe('read');
  });

  it('no covering entry means deny', () => {
    const bare = restricted(sandboxPlan(context(managed([])), '/'));
    expect(accessAt(bare, '/etc')).toBe('deny');
    expect(hasRootRead(bare)).toBe(false);
  });

  it('root write narrowed by a read entry is not full-disk write', () => {
    const narrowed = restricted(
      sandboxPlan(
        context(
          managed([
            { path: special('root'), access: 'write' },
            { path: special('project_roots', '.git'), access: 'read' },
          ]),
        ),
        '/',
      ),
    );
    expect(hasFullDiskWrite(narrowed)).toBe(false);
  });
});
