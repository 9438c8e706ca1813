/** The conformance suite against our TypeScript executor (`src/server`), in-process. */
import { tsExecServerFactory } from '../support/tsExecServer.js';
import { describeConformance, webSocketTarget } from './conformanceSuite.js';

describeConformance('TypeScript executor', webSocketTarget(tsExecServerFactory));
