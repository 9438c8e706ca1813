/**
 * `capabilities/discoverV2` details beyond the conformance suite: the 64-character name limit,
 * the 1 MiB `SKILL.md` bound, a plugin manifest that is not JSON and the fail-closed refusal of
 * a confining sandbox. Behaviour probed on 0.169.0 (spec/fixtures/FINDINGS.md).
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdir, mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import {
  CAPABILITY_WARNING,
  discoverCapabilitiesV2,
  loadSkill,
} from '../../src/server/skillDiscovery.js';
import { readOnly } from '../support/sandboxProfiles.js';

let home = '';
const uri = (path: string) => pathToFileURL(path).href;
const locations = () => ({ codexHome: home, systemDir: '/etc/codex' });

async function write(path: string, contents: string | Buffer): Promise<string> {
  await mkdir(join(path, '..'), { recursive: true });
  await writeFile(path, contents);
  return path;
}

beforeAll(async () => {
  home = await realpath(await mkdtemp(join(tmpdir(), 'execrx-skills-')));
});

afterAll(async () => {
  await rm(home, { recursive: true, force: true });
});

describe('loadSkill', () => {
  it('keeps a 64-character name and skips a 65-character one', async () => {
    const named = (n: number) => `---\nname: ${'n'.repeat(n)}\ndescription: d\n---\n`;
    const ok = await write(join(home, 'limit', 'ok', 'SKILL.md'), named(64));
    const long = await write(join(home, 'limit', 'long', 'SKILL.md'), named(65));
    expect((await loadSkill(ok))?.name).toBe('n'.repeat(64));
    expect(await loadSkill(long)).toBeUndefined();
  });

  it('skips a SKILL.md over 1 MiB without reading it whole', async () => {
    const head = '---\nname: big\ndescription: d\n---\n';
    const exact = await write(
      join(home, 'size', 'exact', 'SKILL.md'),
      head + 'x'.repeat(1024 * 1024 - head.length),
    );
    const over = await write(
      join(home, 'size', 'over', 'SKILL.md'),
      head + 'x'.repeat(1024 * 1024 - head.length + 1),
    );
    expect((await loadSkill(exact))?.name).toBe('big');
    expect(await loadSkill(over)).toBeUndefined();
  });
});

describe('discoverCapabilitiesV2', () => {
  it('leaves out a plugin whose manifest is not JSON, with the one warning', async () => {
    await write(join(home, 'plugins/cache/m/p/1/.codex-plugin/plugin.json'), '{bad');
    const result = await discoverCapabilitiesV2({ cwd: uri(home) }, locations);
    expect(result.plugins).toEqual([]);
    expect(result.warnings).toEqual([CAPABILITY_WARNING]);
    await rm(join(home, 'plugins'), { recursive: true, force: true });
  });

  it('refuses a sandbox that asks for confinement (fail closed)', async () => {
    const sandbox = readOnly(home); // codex's `-s read-only`: confining
    await expect(
      discoverCapabilitiesV2({ cwd: uri(home), sandbox }, locations),
    ).rejects.toMatchObject({
      code: -32600,
      message: 'sandbox intent cannot be enforced on this executor',
    });
    const disabled = { permissions: { type: 'disabled' }, windowsSandboxLevel: 'disabled' };
    await expect(
      discoverCapabilitiesV2({ cwd: uri(home), sandbox: disabled }, locations),
    ).resolves.toMatchObject({ plugins: [] });
  });
});
