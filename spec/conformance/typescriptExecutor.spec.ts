/** The conformance suite against our TypeScript executor (`src/server`), in-process. */
import { startTsExecServer, tsExecServerFactory } from '../support/tsExecServer.js';
import { describeCapabilities } from './capabilitiesSuite.js';
import { describeConformance, webSocketTarget } from './conformanceSuite.js';

describeConformance('TypeScript executor', webSocketTarget(tsExecServerFactory));
describeCapabilities('TypeScript executor', ({ codexHome }) =>
  webSocketTarget(() => startTsExecServer({ codexHome }))(),
);
