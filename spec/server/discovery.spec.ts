/**
 * `capabilityRoots/discoverV1` details beyond the conformance suite: Rust's UTF-8 error texts,
 * manifest paths that leave the root, the per-root text budget and sandboxed roots. Texts
 * were probed on 0.169.0 (spec/fixtures/FINDINGS.md "capabilityRoots/discoverV1").
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdir, mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { discoverCapabilityRoots, utf8Error } from '../../src/server/discovery.js';
import { readOnly } from '../support/sandboxProfiles.js';

let root = '';
const uri = (path: string) => pathToFileURL(path).href;

beforeAll(async () => {
  root = await realpath(await mkdtemp(join(tmpdir(), 'execrx-discovery-')));
});

afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

describe('utf8Error', () => {
  it('words the first invalid sequence as Rust does', () => {
    expect(utf8Error(Buffer.from('plain ascii and é'))).toBeUndefined();
    expect(utf8Error(Buffer.from([0xff]))).toBe('invalid utf-8 sequence of 1 bytes from index 0');
    expect(utf8Error(Buffer.from([0x41, 0xe2, 0x28, 0xa1]))).toBe(
      'invalid utf-8 sequence of 1 bytes from index 1',
    );
    expect(utf8Error(Buffer.from([0xe2, 0x82, 0x28]))).toBe(
      'invalid utf-8 sequence of 2 bytes from index 0',
    );
    expect(utf8Error(Buffer.from([0xf0, 0x90, 0x80, 0x28]))).toBe(
      'invalid utf-8 sequence of 3 bytes from index 0',
    );
    expect(utf8Error(Buffer.from([0x61, 0xf0, 0x90, 0x80]))).toBe(
      'incomplete utf-8 byte sequence from index 1',
    );
    // Overlong and surrogate encodings are invalid at their first byte's successor.
    expect(utf8Error(Buffer.from([0xe0, 0x80, 0x80]))).toBe(
      'invalid utf-8 sequence of 1 bytes from index 0',
    );
    expect(utf8Error(Buffer.from([0xed, 0xa0, 0x80]))).toBe(
      'invalid utf-8 sequence of 1 bytes from index 0',
    );
  });
});

describe('discoverCapabilityRoots', () => {
  it('warns about manifest paths outside the root and falls back to the default files', async () => {
    const plugin = join(root, 'escape');
    await mkdir(join(plugin, '.codex-plugin'), { recursive: true });
    await writeFile(
      join(plugin, '.codex-plugin', 'plugin.json'),
      '{"mcpServers":"./../elsewhere.json","apps":"./"}',
    );
    await writeFile(join(plugin, '.mcp.json'), '{}');
    const [found] = (await discoverCapabilityRoots({ roots: [{ id: 'e', path: uri(plugin) }] }))
      .roots;
    const manifestUri = uri(join(plugin, '.codex-plugin', 'plugin.json'));
    expect(found?.plugin?.mcpConfig).toEqual({
      path: uri(join(plugin, '.mcp.json')),
      contents: '{}',
    });
    expect(found?.plugin?.appsConfig).toBeNull();
    expect(found?.warnings).toEqual([
      `ignoring mcpServers in ${manifestUri}: path must remain below the capability root`,
      `ignoring apps in ${manifestUri}: path must remain below the capability root`,
    ]);
  });

  it('stops reading a root past 16 MiB of text, with one warning', async () => {
    const bundle = join(root, 'bundle');
    for (let i = 1; i <= 17; i += 1) {
      await mkdir(join(bundle, `s${String(i).padStart(2, '0')}`), { recursive: true });
      await writeFile(
        join(bundle, `s${String(i).padStart(2, '0')}`, 'SKILL.md'),
        'b'.repeat(1_000_000),
      );
    }
    const [found] = (await discoverCapabilityRoots({ roots: [{ id: 'b', path: uri(bundle) }] }))
      .roots;
    expect(found?.skills).toHaveLength(16);
    expect(found?.warnings).toEqual(['capability root bundle exceeds the 16777216-byte limit']);
  });

  it('refuses a root whose sandbox asks for confinement (fail closed)', async () => {
    const sandbox = readOnly(root); // codex's `-s read-only`: confining
    await expect(
      discoverCapabilityRoots({ roots: [{ id: 's', path: uri(root), sandbox }] }),
    ).rejects.toMatchObject({ code: -32600 });
    await expect(
      discoverCapabilityRoots({
        roots: [
          {
            id: 'd',
            path: uri(root),
            sandbox: { permissions: { type: 'disabled' }, windowsSandboxLevel: 'disabled' },
          },
        ],
      }),
    ).resolves.toMatchObject({ roots: [{ id: 'd', error: null }] });
  });
});
