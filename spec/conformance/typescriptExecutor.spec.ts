/** The conformance suite against our TypeScript executor (`src/server`), in-process. */
import { tsExecServerFactory } from '../support/tsExecServer.js';
import { describeConformance, webSocketTarget } from './conformanceSuite.js';

describeConformance('TypeScript executor', webSocketTarget(tsExecServerFactory), {
  // Bug in src/server/childProcess.ts: Node's child_process hands the child UNIX socketpairs,
  // not pipes (the binary uses pipes). So `> /dev/stdout` fails with ENXIO, `[ -p /dev/fd/1 ]`
  // is false, and `bash -c` with pipeStdin sources ~/.bashrc (a socket on stdin looks like a
  // remote shell to bash). spawn's stdio options cannot make a pipe; the fix needs real pipes.
  knownFailures: ['pipe-stdio', 'dev-stdout'],
});
