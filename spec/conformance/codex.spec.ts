/** The conformance suite against the real `codex exec-server` 0.169.0 binary (the judge). */
import { codexExecServerFactory } from '../support/codexExecServer.js';
import { describeConformance, webSocketTarget } from './conformanceSuite.js';

describeConformance('codex exec-server 0.169.0', webSocketTarget(codexExecServerFactory));
