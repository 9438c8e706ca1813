/** The sandbox conformance suite against the real `codex exec-server` 0.169.0 (the judge). */
import { mkdirSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { startCodexExecServer } from '../support/codexExecServer.js';
import { describeSandboxConformance } from './sandboxSuite.js';

describeSandboxConformance('codex exec-server 0.169.0', () => {
  // Outside /tmp: codex will not install its sandbox helper there.
  const codexHomeParent = join(homedir(), '.cache');
  mkdirSync(codexHomeParent, { recursive: true });
  return startCodexExecServer({ codexHomeParent });
});
