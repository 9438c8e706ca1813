/** The conformance suite against the real `codex exec-server` 0.169.0 binary (the judge). */
import { codexExecServerFactory, startCodexExecServer } from '../support/codexExecServer.js';
import { describeCapabilities } from './capabilitiesSuite.js';
import { describeConformance, webSocketTarget } from './conformanceSuite.js';

describeConformance('codex exec-server 0.169.0', webSocketTarget(codexExecServerFactory));
describeCapabilities('codex exec-server 0.169.0', ({ codexHome }) =>
  webSocketTarget(() => startCodexExecServer({ codexHome }))(),
);
