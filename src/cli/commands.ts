/**
 * The table of `execrx` commands. New commands (`rendezvous`, the Noise modes of `serve`)
 * are added here and in their own `<name>Command.ts` file.
 */
import type { Command } from './command.js';
import { runCommand } from './runCommand.js';
import { serveCommand } from './serveCommand.js';

export const COMMANDS: readonly Command[] = [runCommand, serveCommand];

export function findCommand(name: string): Command | undefined {
  return COMMANDS.find((command) => command.name === name);
}
