/**
 * A small hand-rolled option parser: `--name value`, `--name=value`, boolean flags, repeatable
 * options, `-h`/`--help`, and `--` (or the first positional argument, when the command takes
 * a trailing command line) ending option parsing.
 */
import { UsageError } from './usageError.js';

export interface OptionSpec {
  /** Long name without dashes, e.g. `url`. */
  readonly name: string;
  /** `flag`: no value; `value`: one value, last wins; `list`: repeatable. */
  readonly kind: 'flag' | 'value' | 'list';
  /** Shown in the help text as `--name VALUE`. */
  readonly valueName?: string;
  readonly description: string;
}

export interface ParsedOptions {
  readonly flags: ReadonlySet<string>;
  readonly values: ReadonlyMap<string, string>;
  readonly lists: ReadonlyMap<string, readonly string[]>;
  /** Arguments after the options (after `--`, or from the first positional argument on). */
  readonly rest: readonly string[];
  readonly help: boolean;
}

/**
 * Parses `args` for `command`. With `stopAtPositional` the first argument that is not an
 * option starts `rest` (like `env` or `ssh`); otherwise positional arguments are refused.
 */
export function parseOptions(
  command: string,
  args: readonly string[],
  specs: readonly OptionSpec[],
  stopAtPositional: boolean,
): ParsedOptions {
  const flags = new Set<string>();
  const values = new Map<string, string>();
  const lists = new Map<string, string[]>();
  let help = false;
  let index = 0;
  for (; index < args.length; index++) {
    const arg = args[index] as string;
    if (arg === '--') {
      index++;
      break;
    }
    if (arg === '-h' || arg === '--help') {
      help = true;
      continue;
    }
    if (!arg.startsWith('-') || arg === '-') {
      if (stopAtPositional) break;
      throw new UsageError(`unexpected argument \`${arg}\``, command);
    }
    if (!arg.startsWith('--')) throw new UsageError(`unknown option \`${arg}\``, command);
    const equals = arg.indexOf('=');
    const name = arg.slice(2, equals === -1 ? undefined : equals);
    const spec = specs.find((candidate) => candidate.name === name);
    if (spec === undefined) throw new UsageError(`unknown option \`--${name}\``, command);
    if (spec.kind === 'flag') {
      if (equals !== -1) throw new UsageError(`option \`--${name}\` takes no value`, command);
      flags.add(name);
      continue;
    }
    let value: string;
    if (equals !== -1) {
      value = arg.slice(equals + 1);
    } else {
      const next = args[index + 1];
      if (next === undefined) throw new UsageError(`option \`--${name}\` needs a value`, command);
      value = next;
      index++;
    }
    if (spec.kind === 'value') values.set(name, value);
    else lists.set(name, [...(lists.get(name) ?? []), value]);
  }
  return { flags, values, lists, rest: args.slice(index), help };
}

/** The options block of a help text, one aligned line per option. */
export function formatOptions(specs: readonly OptionSpec[]): string {
  const heads = specs.map((spec) =>
    spec.kind === 'flag' ? `--${spec.name}` : `--${spec.name} ${spec.valueName ?? 'VALUE'}`,
  );
  const width = Math.max(...heads.map((head) => head.length), '-h, --help'.length);
  const lines = specs.map(
    (spec, i) =>
      `  ${(heads[i] as string).padEnd(width)}  ${spec.description}${spec.kind === 'list' ? ' (repeatable)' : ''}`,
  );
  lines.push(`  ${'-h, --help'.padEnd(width)}  Show this help`);
  return lines.join('\n');
}
