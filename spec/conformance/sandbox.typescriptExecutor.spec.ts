/** The sandbox conformance suite against our TypeScript executor (bubblewrap from PATH). */
import { tsExecServerFactory } from '../support/tsExecServer.js';
import { describeSandboxConformance } from './sandboxSuite.js';

describeSandboxConformance('TypeScript executor', tsExecServerFactory);
