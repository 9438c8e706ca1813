/**
 * The conformance suite over the encrypted path: our harness (`/connect` +
 * `connectNoiseHarness`) → our rendezvous → `codex exec-server --remote` 0.169.0. Every
 * session of the suite is its own Noise stream on its own harness socket.
 */
import { startRendezvous } from '../../src/rendezvous/index.js';
import { describeConformance } from '../conformance/conformanceSuite.js';
import { startCodexRemote } from '../support/codexRemote.js';
import { rendezvousHarness } from '../support/rendezvousHarness.js';

const TOKEN = 'sk-test-execrx-conformance';

describeConformance('codex exec-server 0.169.0 over Noise through our rendezvous', async () => {
  const rendezvous = await startRendezvous({ executorToken: TOKEN });
  try {
    const executor = await startCodexRemote(rendezvous, { apiKey: TOKEN });
    const harness = rendezvousHarness(rendezvous, executor.environmentId, TOKEN);
    return {
      connect: () => harness.connect(),
      stop: async () => {
        await executor.stop();
        await rendezvous.close();
      },
    };
  } catch (error) {
    await rendezvous.close();
    throw error;
  }
});
