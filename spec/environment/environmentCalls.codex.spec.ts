/**
 * The environment's own calls (Rust `Environment::force_info`, `read_environment_config`,
 * `discover_capability_roots`) through a configured environment on the real
 * `codex exec-server` 0.169.0: each connects first, then asks the current session.
 */
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { realpathSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { firstValueFrom, timeout, type Observable } from 'rxjs';
import { EnvironmentManager, webSocketUrl, type Environment } from '../../src/environment/index.js';
import { startCodexExecServer, type RunningExecServer } from '../support/codexExecServer.js';

const within = <T>(source: Observable<T>): Promise<T> =>
  firstValueFrom(source.pipe(timeout(20_000)));

let server: RunningExecServer;
let workDir: string;
let manager: EnvironmentManager;

beforeAll(async () => {
  workDir = realpathSync(await mkdtemp(join(tmpdir(), 'execrx-envcalls-')));
  const codexHome = join(workDir, 'home');
  await mkdir(codexHome);
  await writeFile(join(codexHome, 'config.toml'), 'model = "env-model"\n');
  server = await startCodexExecServer({ codexHome });
  manager = EnvironmentManager.fromSnapshot({
    environments: [{ id: 'remote', transport: webSocketUrl(server.url) }],
    default: { id: 'remote' },
    includeLocal: false,
  });
});

afterAll(async () => {
  manager?.close();
  await server?.stop();
  if (workDir) await rm(workDir, { recursive: true, force: true });
});

it('forceInfo, readEnvironmentConfig and discoverCapabilityRoots on a configured environment', async () => {
  const environment = manager.getEnvironment('remote') as Environment;
  expect((await within(environment.forceInfo())).capabilities.environmentConfigRead).toBe(true);
  const config = await within(
    environment.readEnvironmentConfig({
      cwd: workDir,
      configPaths: [['model']],
      requirementsPaths: [],
    }),
  );
  expect(config.config.layers.map((layer) => layer.toml)).toEqual(['model = "env-model"\n']);
  const roots = await within(environment.discoverCapabilityRoots([{ id: 'w', path: workDir }]));
  expect(roots.roots.map((root) => root.id)).toEqual(['w']);
});

it("the environment's filesystem reads a file block by block as it is pulled", async () => {
  const environment = manager.getEnvironment('remote') as Environment;
  const path = join(workDir, 'blocks.bin');
  const content = Buffer.alloc(2 * 1024 * 1024 + 5, 7);
  await writeFile(path, content);
  const blocks: Uint8Array[] = [];
  for await (const block of environment.getFilesystem().readFileBlocks(path)) blocks.push(block);
  expect(blocks.map((block) => block.byteLength)).toEqual([1024 * 1024, 1024 * 1024, 5]);
  expect(Buffer.concat(blocks).equals(content)).toBe(true);
});
