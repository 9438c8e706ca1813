import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { execFileSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const relayDir = fileURLToPath(new URL('./protobuf/', import.meta.url));
const binDir = fileURLToPath(new URL('../../node_modules/.bin/', import.meta.url));

describe('spec/relay/protobuf/gen', () => {
  let workDir: string;
  beforeAll(() => {
    workDir = mkdtempSync(join(tmpdir(), 'execrx-relay-gen-'));
    cpSync(join(relayDir, 'proto'), join(workDir, 'proto'), { recursive: true });
    cpSync(join(relayDir, 'buf.gen.yaml'), join(workDir, 'buf.gen.yaml'));
  });
  afterAll(() => rmSync(workDir, { recursive: true, force: true }));

  it('is what `generate.sh` produces from relay.proto (regenerate after editing the proto)', () => {
    execFileSync(join(binDir, 'buf'), ['generate'], {
      cwd: workDir,
      env: { ...process.env, PATH: `${binDir}:${process.env.PATH ?? ''}` },
      stdio: 'pipe',
      timeout: 20_000,
    });
    const fresh = readFileSync(join(workDir, 'gen', 'relay_pb.ts'), 'utf8');
    const checkedIn = readFileSync(join(relayDir, 'gen', 'relay_pb.ts'), 'utf8');
    expect(fresh).toBe(checkedIn);
  });
});
