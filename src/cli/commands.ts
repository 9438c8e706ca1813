/** The table of `execrx` commands; each lives in its own `<name>Command.ts` file. */
import type { Command } from './command.js';
import { cpCommand } from './cpCommand.js';
import { lsCommand } from './lsCommand.js';
import { consoleCommand } from './consoleCommand.js';
import { rendezvousCommand } from './rendezvousCommand.js';
import { runCommand } from './runCommand.js';
import { serveCommand } from './serveCommand.js';

export const COMMANDS: readonly Command[] = [
  runCommand,
  cpCommand,
  lsCommand,
  serveCommand,
  rendezvousCommand,
  consoleCommand,
];

export function findCommand(name: string): Command | undefined {
  return COMMANDS.find((command) => command.name === name);
}
