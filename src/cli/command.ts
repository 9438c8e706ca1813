/** The shape of one `execrx` sub-command; `commands.ts` holds the table of them. */
import type { Readable, Writable } from 'node:stream';

/** The process streams a command talks to (the real ones from `main`, fakes in tests). */
export interface CliStreams {
  readonly stdin: Readable & { isTTY?: boolean; setRawMode?: (mode: boolean) => unknown };
  readonly stdout: Writable & { isTTY?: boolean };
  readonly stderr: Writable & { isTTY?: boolean };
}

export interface Command {
  readonly name: string;
  /** One line for the top-level help. */
  readonly summary: string;
  /** The full `execrx <name> --help` text. */
  readonly help: string;
  /** Runs with the arguments after the command name; resolves with the exit code. */
  run(args: readonly string[], streams: CliStreams): Promise<number>;
}
