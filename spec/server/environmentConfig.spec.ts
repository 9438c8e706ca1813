/**
 * `environmentConfig/read` of the TypeScript executor beyond what the conformance suite can
 * set up on the binary: the system directory (`/etc/codex` on the binary, a temp dir here),
 * legacy managed config, requirements, linked worktrees and the Codex-home errors. The layer
 * names and the managed-config requirements were probed on 0.169.0 with real `/etc/codex` files.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdir, mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { projectStack, type LayerStack } from '../../src/server/configLayers.js';
import {
  configLocations,
  readEnvironmentConfig,
  type EnvironmentConfigReadParams,
} from '../../src/server/environmentConfig.js';
import { RpcFailure } from '../../src/server/rpcFailure.js';

let root = '';
let codexHome = '';
let systemDir = '';
let work = '';

beforeAll(async () => {
  root = await realpath(await mkdtemp(join(tmpdir(), 'execrx-envconfig-')));
  codexHome = join(root, 'home');
  systemDir = join(root, 'etc-codex');
  work = join(root, 'work');
  for (const dir of [codexHome, systemDir, work]) await mkdir(dir, { recursive: true });
});

afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

afterEach(async () => {
  for (const file of ['config.toml', 'managed_config.toml', 'requirements.toml']) {
    await rm(join(systemDir, file), { force: true });
    await rm(join(codexHome, file), { force: true });
  }
});

const uri = (path: string) => pathToFileURL(path).href;
const read = (cwd: string, configPaths: string[][], requirementsPaths: string[][] = []) =>
  readEnvironmentConfig({ cwd: uri(cwd), configPaths, requirementsPaths }, () => ({
    codexHome,
    systemDir,
  }));

describe('environmentConfig/read layers', () => {
  it('orders system, user and legacy managed config; the cloud slot follows the system layer', async () => {
    await writeFile(join(systemDir, 'config.toml'), '[probe]\nx = 1\n');
    await writeFile(join(codexHome, 'config.toml'), '[probe]\ny = 2\n');
    await writeFile(
      join(systemDir, 'managed_config.toml'),
      'sandbox_mode = "workspace-write"\napproval_policy = "never"\n[probe]\nz = 3\n',
    );
    await writeFile(join(systemDir, 'requirements.toml'), '[probe]\nr = 4\n');
    const result = await read(
      work,
      [['probe'], ['sandbox_mode']],
      [['probe'], ['allowed_sandbox_modes'], ['allowed_approval_policies']],
    );
    expect(result.config).toEqual({
      layers: [
        {
          source: `system (${join(systemDir, 'config.toml')})`,
          baseDir: uri(systemDir),
          toml: '[probe]\nx = 1\n',
        },
        {
          source: `user (${join(codexHome, 'config.toml')})`,
          baseDir: uri(codexHome),
          toml: '[probe]\ny = 2\n',
        },
        {
          source: `legacy managed_config.toml (${join(systemDir, 'managed_config.toml')})`,
          baseDir: uri(systemDir),
          toml: 'sandbox_mode = "workspace-write"\n\n[probe]\nz = 3\n',
        },
      ],
      cloudInsertionIndex: 1,
    });
    expect(result.requirements).toEqual({
      layers: [
        {
          source: join(systemDir, 'requirements.toml'),
          baseDir: uri(systemDir),
          toml: '[probe]\nr = 4\n',
        },
        {
          source: join(systemDir, 'managed_config.toml'),
          baseDir: uri(systemDir),
          toml:
            'allowed_approval_policies = ["never"]\n' +
            'allowed_sandbox_modes = ["read-only", "workspace-write"]\n',
        },
      ],
      cloudInsertionIndex: 1,
    });
  });

  it('counts the cloud slot only over the layers the projection keeps', async () => {
    await writeFile(join(codexHome, 'config.toml'), 'model = "m"\n');
    const result = await read(work, [['model']]);
    expect(result.config.cloudInsertionIndex).toBe(0);
    expect(result.config.layers).toHaveLength(1);
  });

  it('follows a linked worktree to its main repository for trust', async () => {
    const main = join(work, 'main');
    const linked = join(work, 'linked');
    await mkdir(join(main, '.git', 'worktrees', 'linked'), { recursive: true });
    await writeFile(join(main, '.git', 'HEAD'), 'ref: refs/heads/main\n');
    await mkdir(join(linked, '.codex'), { recursive: true });
    await writeFile(join(linked, '.git'), `gitdir: ${join(main, '.git', 'worktrees', 'linked')}\n`);
    await writeFile(join(linked, '.codex', 'config.toml'), 'model = "linked"\n');
    await writeFile(
      join(codexHome, 'config.toml'),
      `[projects."${main}"]\ntrust_level = "trusted"\n`,
    );
    const result = await read(linked, [['model']]);
    expect(result.config.layers.map((layer) => layer.source)).toEqual([
      `project (${join(linked, '.codex', 'config.toml')})`,
    ]);
  });

  it('skips a project .codex that is the Codex home, and untrusted or broken untrusted ones', async () => {
    const project = join(work, 'home-project');
    await mkdir(join(project, '.git'), { recursive: true });
    await writeFile(join(project, '.git', 'HEAD'), '');
    await mkdir(join(project, '.codex'), { recursive: true });
    await writeFile(join(project, '.codex', 'config.toml'), 'model = "project"\n');
    await writeFile(
      join(project, '.codex', 'config.toml'),
      `model = "project"\n[projects."${project}"]\ntrust_level = "trusted"\n`,
    );
    const asHome = await readEnvironmentConfig(
      { cwd: uri(project), configPaths: [['model']], requirementsPaths: [] },
      () => ({ codexHome: join(project, '.codex'), systemDir }),
    );
    expect(asHome.config.layers.map((layer) => layer.source)).toEqual([
      `user (${join(project, '.codex', 'config.toml')})`,
    ]);

    const broken = join(work, 'broken');
    await mkdir(join(broken, '.codex'), { recursive: true });
    await writeFile(join(broken, '.codex', 'config.toml'), '[[nope\n');
    expect((await read(broken, [['model']])).config.layers).toEqual([]);
    await writeFile(
      join(codexHome, 'config.toml'),
      `[projects."${broken}"]\ntrust_level = "trusted"\n`,
    );
    await expect(read(broken, [['model']])).rejects.toMatchObject({
      code: -32603,
      message: expect.stringMatching(
        /^failed to load executor-local config: Error parsing project config file .*broken\/\.codex\/config\.toml: /,
      ),
    });
  });

  it('uses project_root_markers from the user config', async () => {
    const project = join(work, 'marked');
    const deep = join(project, 'a', 'b');
    await mkdir(deep, { recursive: true });
    await mkdir(join(project, '.codex'), { recursive: true });
    await writeFile(join(project, 'ROOT'), '');
    await writeFile(join(project, '.codex', 'config.toml'), 'model = "marked"\n');
    await writeFile(
      join(codexHome, 'config.toml'),
      `project_root_markers = ["ROOT"]\n[projects."${project}"]\ntrust_level = "trusted"\n`,
    );
    const result = await read(deep, [['model']]);
    expect(result.config.layers.map((layer) => layer.toml)).toEqual(['model = "marked"\n']);
  });
});

describe('projection', () => {
  const stack: LayerStack = {
    layers: [
      { source: 's', baseDir: '/', toml: { a: { b: 1, c: { d: 2 } }, scalar: 'x', other: 1 } },
      { source: 'u', baseDir: '/', toml: { other: 2 } },
    ],
    cloudInsertionIndex: 1,
  };

  it('keeps selected subtrees whole, a scalar above a selector, and drops emptied layers', () => {
    expect(
      projectStack(stack, [
        ['a', 'c'],
        ['scalar', 'deeper'],
      ]),
    ).toEqual({
      layers: [{ source: 's', baseDir: '/', toml: { a: { c: { d: 2 } }, scalar: 'x' } }],
      cloudInsertionIndex: 1,
    });
    // A shorter path wins over a longer one below it, in either order.
    expect(projectStack(stack, [['a', 'c'], ['a']]).layers[0]?.toml).toEqual({
      a: { b: 1, c: { d: 2 } },
    });
    expect(projectStack(stack, [['a'], ['a', 'c']]).layers[0]?.toml).toEqual({
      a: { b: 1, c: { d: 2 } },
    });
    expect(projectStack(stack, [['other']]).cloudInsertionIndex).toBe(1);
    expect(projectStack(stack, [['nothing']])).toEqual({ layers: [], cloudInsertionIndex: 0 });
  });
});

describe('Codex home', () => {
  const saved = process.env.CODEX_HOME;
  afterEach(() => {
    if (saved === undefined) delete process.env.CODEX_HOME;
    else process.env.CODEX_HOME = saved;
  });

  it('refuses a CODEX_HOME that does not exist or is not a directory, as the binary does', async () => {
    process.env.CODEX_HOME = join(root, 'absent');
    expect(() => configLocations()).toThrow(
      new RpcFailure(
        -32603,
        `failed to find Codex home: CODEX_HOME points to "${join(root, 'absent')}", but that path does not exist`,
      ),
    );
    const file = join(root, 'a-file');
    await writeFile(file, '');
    process.env.CODEX_HOME = file;
    expect(() => configLocations()).toThrow(/but that path is not a directory$/);
    process.env.CODEX_HOME = codexHome;
    expect(configLocations().codexHome).toBe(codexHome);
  });

  it('validates the paths before touching the file system', async () => {
    const params: EnvironmentConfigReadParams = {
      cwd: 'not a uri',
      configPaths: [],
      requirementsPaths: [],
    };
    await expect(
      readEnvironmentConfig(params, () => {
        throw new Error('must not be called');
      }),
    ).rejects.toMatchObject({ code: -32602 });
  });
});
