/**
 * The conformance suite over the encrypted path: our harness (`/connect` +
 * `connectNoiseHarness`) → our rendezvous → `codex exec-server --remote` 0.169.0. Every
 * session of the suite is its own Noise stream on its own harness socket.
 */
import { describeConformance } from '../conformance/conformanceSuite.js';
import { startCodexRemote } from '../support/codexRemote.js';
import { startRendezvousSetup } from '../support/rendezvousHarness.js';

const TOKEN = 'sk-test-execrx-conformance';

describeConformance('codex exec-server 0.169.0 over Noise through our rendezvous', async () => {
  const setup = await startRendezvousSetup({ executorToken: TOKEN }, (rendezvous) =>
    startCodexRemote(rendezvous, { apiKey: TOKEN }),
  );
  return { connect: () => setup.harness.connect(), stop: () => setup.stop() };
});
