/**
 * Merges the CLI's code-split chunks that a load path always loads together into one file.
 *
 * Why: esbuild puts every set of modules reached by the same set of entry points in a chunk of
 * its own, and the CLI has many `import()` targets, so a fresh `execrx run --url` loaded
 * dozens of files; Node's ESM loader resolves and links every import of every file. What
 * merging earns: docs/performance.md, "Fresh-run startup (session 9)".
 *
 * Which: `LOAD_PATHS` names a few entry sets. A chunk's key is the list of paths that load it
 * (statically, from their entries); chunks with the same non-empty key become one file. Keys
 * only grow along imports (what a chunk imports is loaded by every path that loads the chunk),
 * so each merged file's imports point to files of larger keys: no import cycle between files,
 * and a path loads the same modules as before plus, at most, ones another path needs with them.
 *
 * How: each chunk's code runs inside a function of the merged file, in import order; what it
 * imports from another member arrives as a parameter, read after that member ran; what it
 * exports is re-exported as `name$N` (N: the member's index), and every other file's imports
 * of a member are rewritten to those names. Exports are read once, after the member ran: a
 * member that assigns an exported binding later fails the build (`liveBindingHazard`). The
 * result is checked by esbuild's parser. This relies on the shape of esbuild's ESM output: top
 * level `import … from "…";` statements and one `export { … };` at the end of a chunk.
 */
import { transform } from 'esbuild';
import { realpathSync } from 'node:fs';
import { readFile, rm, writeFile } from 'node:fs/promises';
import { basename, dirname, join, relative, resolve } from 'node:path';

/**
 * The load paths, as entry modules under `dist/` (the CLI's entry and `import()` targets):
 * every command, `run --registry` before it loads the client (its lookup leaves first), and
 * the client side of `run`.
 */
export const LOAD_PATHS = [
  ['cli/main.js'],
  ['cli/registryEndpoint.js'],
  ['cli/endpoint.js', 'cli/runProcess.js'],
];

/** `import … from "…";` or `import "…";` at the start of a line (esbuild prints them so). */
const IMPORT = /^import\s*(?:([^;"']*?)\s*from\s*)?(["'])([^"']+)\2;/gm;
const EXPORT = /^export\s*\{([^}]*)\};?\s*$/m;

/** `a, b as c` → [{ imported: 'a', local: 'a' }, { imported: 'b', local: 'c' }]. */
function specifiers(list) {
  return list
    .split(',')
    .map((part) => part.trim())
    .filter((part) => part !== '')
    .map((part) => {
      const [imported, local = imported] = part.split(/\s+as\s+/);
      return { imported, local };
    });
}

/** The import statements of a chunk's text, with where they are. */
function importsOf(text, file) {
  return [...text.matchAll(IMPORT)].map((match) => {
    const clause = match[1]?.trim();
    const source = match[3];
    const target = source.startsWith('.') ? resolve(dirname(file), source) : undefined;
    let kind = 'bare';
    let names = [];
    if (clause !== undefined) {
      if (clause.startsWith('{')) {
        kind = 'named';
        names = specifiers(clause.slice(1, -1));
      } else if (clause.startsWith('*')) {
        kind = 'namespace';
        names = [{ imported: '*', local: clause.replace(/^\*\s*as\s+/, '') }];
      } else {
        kind = 'default';
        names = [{ imported: 'default', local: clause }];
      }
    }
    return { start: match.index, end: match.index + match[0].length, source, target, kind, names };
  });
}

/**
 * Whether `text` assigns `name` anywhere but in its `var`/`let`/`const` declaration (property
 * writes `x.name = …` aside): the re-export, read once, would then go stale.
 */
function liveBindingHazard(text, name) {
  const id = name.replace(/\$/g, '\\$');
  const assignment = new RegExp(
    `(?<![.\\w$])${id}\\s*(?:[-+*/%&|^]|\\*\\*|<<|>>>?|\\?\\?|&&|\\|\\|)?=(?![=>])|(?:\\+\\+|--)\\s*${id}(?![\\w$])|(?<![.\\w$])${id}\\s*(?:\\+\\+|--)`,
    'g',
  );
  for (const match of text.matchAll(assignment)) {
    if (
      !/(?:^|[\s;])(?:var|let|const)\s+$/.test(
        text.slice(Math.max(0, match.index - 8), match.index),
      )
    ) {
      return true;
    }
  }
  return false;
}

/** Merges `members` (chunk paths) into the text of `groupFile`, with the member → index map. */
async function mergeGroup(members, groupFile, texts) {
  const index = new Map(members.map((member, i) => [member, i]));
  const parsed = new Map(members.map((m) => [m, importsOf(texts.get(m), m)]));
  const order = [];
  const state = new Map();
  const visit = (member) => {
    if (state.get(member) === 'done') return;
    if (state.get(member) === 'active')
      throw new Error(`mergeChunks: import cycle through ${member}`);
    state.set(member, 'active');
    for (const imp of parsed.get(member)) if (index.has(imp.target)) visit(imp.target);
    state.set(member, 'done');
    order.push(member);
  };
  members.forEach(visit);

  const head = new Map(); // statement → alias (external imports, hoisted to the merged file's top)
  const external = (statement) => {
    if (!head.has(statement)) head.set(statement, `__execrxImport${head.size}`);
    return head.get(statement);
  };
  const bare = new Set();
  const bodies = [];
  const exported = [];
  for (const member of order) {
    const text = texts.get(member);
    const i = index.get(member);
    const params = [];
    const args = [];
    let body = '';
    let at = 0;
    for (const imp of parsed.get(member)) {
      body += text.slice(at, imp.start);
      at = imp.end;
      const source =
        imp.target === undefined ? imp.source : `./${relative(dirname(groupFile), imp.target)}`;
      if (index.has(imp.target)) {
        for (const { imported, local } of imp.names) {
          if (imp.kind !== 'named')
            throw new Error(`mergeChunks: ${imp.kind} import of a member in ${member}`);
          params.push(local);
          args.push(`__execrxMember${index.get(imp.target)}.${imported}`);
        }
      } else if (imp.kind === 'bare') {
        bare.add(`import ${JSON.stringify(source)};`);
      } else {
        for (const { imported, local } of imp.names) {
          params.push(local);
          const clause =
            imp.kind === 'named'
              ? `{ ${imported} as %s }`
              : imp.kind === 'namespace'
                ? '* as %s'
                : '%s';
          args.push(external(`import ${clause} from ${JSON.stringify(source)};`));
        }
      }
    }
    body += text.slice(at);
    const exports = EXPORT.exec(body);
    const names = exports === null ? [] : specifiers(exports[1]);
    if (exports !== null)
      body = body.slice(0, exports.index) + body.slice(exports.index + exports[0].length);
    for (const { imported: local, local: name } of names) {
      if (liveBindingHazard(body, local)) {
        throw new Error(
          `mergeChunks: ${basename(member)} assigns its export \`${local}\`; it cannot be merged`,
        );
      }
      exported.push(`${name}$${i}`);
    }
    const getters = names.map(
      ({ imported: local, local: name }) => `get ${name}() { return ${local}; }`,
    );
    bodies.push(
      `const __execrxMember${i} = (function (${params.join(', ')}) {\n${body}\nreturn { ${getters.join(', ')} };\n})(${args.join(', ')});`,
    );
    for (const { local: name } of names)
      bodies.push(`const ${name}$${i} = __execrxMember${i}.${name};`);
  }
  const imports = [...head].map(([statement, alias]) => statement.replace('%s', alias));
  const merged = [...bare, ...imports, ...bodies, `export { ${exported.join(', ')} };`, ''].join(
    '\n',
  );
  await transform(merged, { format: 'esm', loader: 'js' }); // throws on a syntax error
  return { index, text: merged };
}

/** Rewrites `file`'s imports of merged members to the merged file's names. */
function rewriteImports(text, file, groups) {
  let out = '';
  let at = 0;
  for (const imp of importsOf(text, file)) {
    const group = groups.find((g) => g.index.has(imp.target));
    if (group === undefined) continue;
    const source = JSON.stringify(`./${relative(dirname(file), group.file)}`);
    const i = group.index.get(imp.target);
    let statement;
    if (imp.kind === 'bare') statement = `import ${source};`;
    else if (imp.kind === 'named') {
      const names = imp.names.map(({ imported, local }) => `${imported}$${i} as ${local}`);
      statement = `import { ${names.join(', ')} } from ${source};`;
    } else throw new Error(`mergeChunks: ${imp.kind} import of a merged chunk in ${file}`);
    out += text.slice(at, imp.start) + statement;
    at = imp.end;
  }
  return out + text.slice(at);
}

/**
 * Merges the chunks of esbuild's `metafile` (its paths relative to `cwd`; the entries under
 * `distReal`, the real path of `dist/`) by `loadPaths`, rewriting the files in place.
 * Returns how many chunks were merged into how many files.
 */
export async function mergeChunks(metafile, cwd, distReal, loadPaths = LOAD_PATHS) {
  const outputs = Object.fromEntries(
    Object.entries(metafile.outputs).map(([path, output]) => [resolve(cwd, path), output]),
  );
  const entryOf = new Map(
    Object.entries(outputs)
      .filter(([, output]) => output.entryPoint !== undefined)
      .map(([path, output]) => [
        relative(distReal, realpathSync(resolve(cwd, output.entryPoint))),
        path,
      ]),
  );
  const closure = (file, seen) => {
    if (seen.has(file)) return seen;
    seen.add(file);
    for (const imp of outputs[file].imports) {
      if (imp.kind === 'import-statement' && !imp.external) closure(resolve(cwd, imp.path), seen);
    }
    return seen;
  };
  const loaded = loadPaths.map((entries) => {
    const seen = new Set();
    for (const entry of entries) {
      const file = entryOf.get(entry);
      if (file === undefined) throw new Error(`mergeChunks: no entry for ${entry}`);
      closure(file, seen);
    }
    return seen;
  });
  const byKey = new Map();
  for (const [file, output] of Object.entries(outputs)) {
    if (output.entryPoint !== undefined || !file.endsWith('.js')) continue;
    const key = loaded.map((files, i) => (files.has(file) ? i : '')).join('');
    if (key === '') continue;
    byKey.set(key, [...(byKey.get(key) ?? []), file]);
  }
  const chunkDirs = [...new Set([...byKey.values()].flat().map((file) => dirname(file)))];
  if (chunkDirs.length !== 1) throw new Error('mergeChunks: chunks in more than one directory');
  const texts = new Map();
  for (const file of Object.keys(outputs))
    if (file.endsWith('.js')) texts.set(file, await readFile(file, 'utf8'));

  const groups = [];
  for (const [key, members] of byKey) {
    if (members.length < 2) continue;
    const file = join(chunkDirs[0], `merged-${key}.js`);
    groups.push({ file, ...(await mergeGroup(members, file, texts)) });
  }
  const merged = new Set(groups.flatMap((g) => [...g.index.keys()]));
  for (const group of groups)
    await writeFile(group.file, rewriteImports(group.text, group.file, groups));
  for (const [file, text] of texts) {
    if (merged.has(file)) continue;
    const rewritten = rewriteImports(text, file, groups);
    if (rewritten !== text) await writeFile(file, rewritten);
  }
  for (const file of merged) await rm(file);
  return { from: merged.size, into: groups.length };
}
