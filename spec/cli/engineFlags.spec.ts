/** Which V8 flags `bin/execrx.js` sets for a command line (before the CLI modules load). */
import { describe, expect, it } from '@jest/globals';
import { engineFlagsFor } from '../../src/cli/engineFlags.js';

describe('engineFlagsFor', () => {
  it('compiles `execrx serve` to baseline code eagerly', () => {
    expect(engineFlagsFor(['serve', '--listen', 'ws://127.0.0.1:0'])).toEqual([
      '--always-sparkplug',
    ]);
  });

  it('leaves every other command (and no command) to the defaults', () => {
    expect(engineFlagsFor(['run', '--', 'serve'])).toEqual([]);
    expect(engineFlagsFor(['rendezvous'])).toEqual([]);
    expect(engineFlagsFor([])).toEqual([]);
  });
});
