/**
 * The conformance suite against our TypeScript executor over the encrypted path: our Noise
 * harness → our executor in direct-Noise mode. Every session is its own Noise stream.
 */
import { NoiseChannelIdentity } from '../../src/noise/index.js';
import { connectNoiseHarness } from '../../src/transport/noiseHarnessTransport.js';
import { startNoiseExecServer } from '../support/noiseExecServer.js';
import { describeConformance } from './conformanceSuite.js';

describeConformance('TypeScript executor over Noise (direct)', async () => {
  const server = await startNoiseExecServer();
  const identity = NoiseChannelIdentity.generate();
  return {
    connect: () => connectNoiseHarness(server.bundle(), identity),
    stop: () => server.stop(),
  };
});
