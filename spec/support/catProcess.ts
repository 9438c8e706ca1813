import type { StartProcessOptions } from '../../src/client/index.js';

/** `cat` in /tmp with a writable stdin: echoes what a test writes, until stdin closes or it is killed. */
export const CAT_WITH_STDIN: StartProcessOptions = {
  argv: ['cat'],
  cwd: '/tmp',
  pipeStdin: true,
  env: { PATH: '/usr/bin:/bin' },
};
