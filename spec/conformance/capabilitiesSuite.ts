/**
 * Conformance of the capabilities the Codex agent uses (issue #15 item 2): `environmentConfig/read`
 * and `fs/watchMissing` / `fs/missingChanged`, asserted the same way against every executor.
 * The target is started with a Codex home this suite owns, so it can write `config.toml`.
 *
 * Requests go over a raw JSON-RPC session (no client layer) so the assertions see the wire.
 * Every wait is bounded; "nothing arrives" is asserted over a fixed quiet period.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdir, mkdtemp, realpath, rm, symlink, writeFile } from 'node:fs/promises';
import { homedir, hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { firstValueFrom, timeout, type Subscription } from 'rxjs';
import type { Transport } from '../../src/transport/transport.js';
import type { ConformanceTarget } from './conformanceSuite.js';

/** Starts one executor whose Codex home (`$CODEX_HOME`) is `codexHome`. */
export type CapabilitiesTargetFactory = (options: {
  codexHome: string;
}) => Promise<ConformanceTarget>;

const WAIT_MS = 10_000;
/** How long "no notification" is watched for. */
const QUIET_MS = 600;

type Message = {
  id?: number;
  method?: string;
  params?: Record<string, unknown>;
  result?: Record<string, unknown>;
  error?: { code: number; message: string };
};

/** One initialized connection, with every inbound message kept. */
class RawSession {
  readonly messages: Message[] = [];
  private readonly waiters = new Set<() => void>();
  private nextId = 1;
  private readonly subscription: Subscription;
  sessionId = '';

  private constructor(private readonly transport: Transport) {
    this.subscription = transport.incoming$.subscribe((text) => {
      this.messages.push(JSON.parse(text) as Message);
      for (const waiter of [...this.waiters]) waiter();
    });
  }

  static async open(target: ConformanceTarget, resumeSessionId?: string): Promise<RawSession> {
    const transport = await firstValueFrom(target.connect().pipe(timeout(WAIT_MS)));
    const session = new RawSession(transport);
    const init = await session.request('initialize', {
      clientName: 'execrx-capabilities',
      resumeSessionId: resumeSessionId ?? null,
    });
    session.sessionId = (init.result as { sessionId: string }).sessionId;
    session.transport.send(JSON.stringify({ method: 'initialized', params: {} }));
    return session;
  }

  /** Raw connection without the handshake, for gating checks. */
  static async raw(target: ConformanceTarget): Promise<RawSession> {
    return new RawSession(await firstValueFrom(target.connect().pipe(timeout(WAIT_MS))));
  }

  waitFor(predicate: (message: Message) => boolean, ms = WAIT_MS): Promise<Message> {
    return new Promise((resolve, reject) => {
      const check = () => {
        const found = this.messages.find(predicate);
        if (!found) return;
        this.waiters.delete(check);
        clearTimeout(timer);
        resolve(found);
      };
      const timer = setTimeout(() => {
        this.waiters.delete(check);
        reject(
          new Error(`no matching message within ${ms} ms; got ${JSON.stringify(this.messages)}`),
        );
      }, ms);
      this.waiters.add(check);
      check();
    });
  }

  request(method: string, params: unknown): Promise<Message> {
    const id = this.nextId++;
    this.transport.send(JSON.stringify({ id, method, params }));
    return this.waitFor((message) => message.id === id && message.method === undefined);
  }

  notifications(method: string): Message[] {
    return this.messages.filter((message) => message.method === method);
  }

  close(): void {
    this.subscription.unsubscribe();
    this.transport.close();
  }
}

const uri = (path: string): string => pathToFileURL(path).href;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export function describeCapabilities(name: string, factory: CapabilitiesTargetFactory): void {
  describe(`agent capabilities conformance: ${name}`, () => {
    let target: ConformanceTarget | undefined;
    let codexHome = '';
    let workDir = '';
    const sessions: RawSession[] = [];

    const open = async (resume?: string): Promise<RawSession> => {
      if (!target) throw new Error('capabilities target did not start');
      const session = await RawSession.open(target, resume);
      sessions.push(session);
      return session;
    };

    beforeAll(async () => {
      // Seen by both executors: the binary inherits this process's environment when spawned.
      process.env.EXECRX_CAPS_TOKEN = 'tok-123';
      process.env.EXECRX_CAPS_EMPTY = '';
      codexHome = await realpath(await mkdtemp(join(tmpdir(), 'execrx-caps-home-')));
      workDir = await realpath(await mkdtemp(join(tmpdir(), 'execrx-caps-work-')));
      target = await factory({ codexHome });
    });

    afterAll(async () => {
      for (const session of sessions) session.close();
      await target?.stop();
      delete process.env.EXECRX_CAPS_TOKEN;
      delete process.env.EXECRX_CAPS_EMPTY;
      await rm(codexHome, { recursive: true, force: true });
      await rm(workDir, { recursive: true, force: true });
    });

    it('advertises environmentConfigRead, fsWatchMissing, capabilityDiscoveryV2 and sandboxedFileStreaming', async () => {
      const session = await open();
      const info = await session.request('environment/info', null);
      const capabilities = info.result?.capabilities as Record<string, boolean>;
      expect(capabilities.environmentConfigRead).toBe(true);
      expect(capabilities.fsWatchMissing).toBe(true);
      expect(capabilities.capabilityDiscoveryV2).toBe(true);
      expect(capabilities.sandboxedFileStreaming).toBe(true);
    });

    it('gates both methods behind initialize with their family names', async () => {
      if (!target) throw new Error('capabilities target did not start');
      const raw = await RawSession.raw(target);
      sessions.push(raw);
      const watch = await raw.request('fs/watchMissing', { watchId: 1, missing: [uri(workDir)] });
      expect(watch.error).toEqual({
        code: -32600,
        message: 'client must call initialize before using filesystem methods',
      });
      const config = await raw.request('environmentConfig/read', {
        cwd: uri(workDir),
        configPaths: [['a']],
        requirementsPaths: [],
      });
      expect(config.error).toEqual({
        code: -32600,
        message: 'client must call initialize before using environment config methods',
      });
    });

    describe('environmentConfig/read', () => {
      /** The reply's user and project layers (a host's /etc/codex layers are left out). */
      const localLayers = (reply: Message, stack: 'config' | 'requirements') =>
        (
          (reply.result?.[stack] as { layers: { source: string; toml: string }[] }).layers ?? []
        ).filter((layer) => /^(user|project) \(/.test(layer.source));

      const read = (
        session: RawSession,
        cwd: string,
        configPaths: string[][],
        requirementsPaths: string[][] = [],
      ) =>
        session.request('environmentConfig/read', {
          cwd: uri(cwd),
          configPaths,
          requirementsPaths,
        });

      it('rejects a request without paths, an empty path and a cwd that is not a file: URI', async () => {
        const session = await open();
        const cwd = uri(workDir);
        const cases: [unknown, string][] = [
          [
            { cwd, configPaths: [], requirementsPaths: [] },
            'at least one config or requirements path is required',
          ],
          [
            { cwd, configPaths: [[]], requirementsPaths: [] },
            'TOML paths must contain at least one key segment',
          ],
          [
            { cwd, configPaths: [['a']], requirementsPaths: [[]] },
            'TOML paths must contain at least one key segment',
          ],
          [
            { cwd: workDir, configPaths: [['a']], requirementsPaths: [] },
            'invalid URI: relative URL without a base',
          ],
          [
            { cwd: 'http://host/x', configPaths: [['a']], requirementsPaths: [] },
            'unsupported path URI scheme `http`',
          ],
          [
            { cwd: 'file://host/x', configPaths: [['a']], requirementsPaths: [] },
            `'file://host/x' is invalid on 'linux'`,
          ],
          [{ cwd, configPaths: [['a']] }, 'missing field `requirementsPaths`'],
        ];
        for (const [params, message] of cases) {
          const reply = await session.request('environmentConfig/read', params);
          expect(reply.error).toEqual({ code: -32602, message });
        }
      });

      it('returns the user layer reduced to the selected paths, printed as the binary prints TOML', async () => {
        await writeFile(
          join(codexHome, 'config.toml'),
          [
            'model = "gpt-5.5"',
            'literal = \'say "hi" \\n\'',
            '[mcp_servers.docs]',
            'url = "http://127.0.0.1:9/mcp"',
            'bearer_token_env_var = "DOCS_TOKEN"',
            'ratio = 1e16',
            'tiny = 3e-7',
            'at = 1979-05-27T00:32:00.500-07:00',
            'text = """',
            'two "lines"',
            'here"""',
            '[mcp_servers.local]',
            'command = "srv"',
            'args = ["--x", \'C:\\dir\', 1]',
            'env = { A = "1", B = { C = 2 } }',
            '[[mcp_servers.local.tools]]',
            'name = "a"',
            '[[mcp_servers.local.tools]]',
            'name = "b"',
            '[features]',
            'x = true',
            '',
          ].join('\n'),
        );
        const session = await open();
        const reply = await read(
          session,
          workDir,
          [['mcp_servers'], ['model', 'deeper']],
          [['mcp_servers']],
        );
        expect(reply.error).toBeUndefined();
        expect(reply.result).toMatchObject({
          userHomeDir: uri(homedir()),
          codexHomeDir: uri(codexHome),
          hostname: hostname(),
        });
        expect(localLayers(reply, 'config')).toEqual([
          {
            source: `user (${join(codexHome, 'config.toml')})`,
            baseDir: uri(codexHome),
            toml: [
              'model = "gpt-5.5"',
              '',
              '[mcp_servers.docs]',
              'url = "http://127.0.0.1:9/mcp"',
              'bearer_token_env_var = "DOCS_TOKEN"',
              'ratio = 10000000000000000.0',
              'tiny = 0.0000003',
              'at = 1979-05-27T00:32:00.5-07:00',
              'text = """',
              'two "lines"',
              'here"""',
              '',
              '[mcp_servers.local]',
              'command = "srv"',
              'args = ["--x", \'C:\\dir\', 1]',
              '',
              '[mcp_servers.local.env]',
              'A = "1"',
              '',
              '[mcp_servers.local.env.B]',
              'C = 2',
              '',
              '[[mcp_servers.local.tools]]',
              'name = "a"',
              '',
              '[[mcp_servers.local.tools]]',
              'name = "b"',
              '',
            ].join('\n'),
          },
        ]);
        expect(localLayers(reply, 'requirements')).toEqual([]);

        const literal = await read(session, workDir, [['literal']]);
        expect(localLayers(literal, 'config').map((layer) => layer.toml)).toEqual([
          'literal = \'say "hi" \\n\'\n',
        ]);
        const nothing = await read(session, workDir, [['no_such_key']]);
        expect(localLayers(nothing, 'config')).toEqual([]);
      });

      it('fails with -32603 naming the file when a layer is not valid TOML', async () => {
        const file = join(codexHome, 'config.toml');
        await writeFile(file, 'model = "x"\n[[broken\n');
        const session = await open();
        const reply = await read(session, workDir, [['model']]);
        expect(reply.error?.code).toBe(-32603);
        expect(reply.error?.message).toMatch(
          new RegExp(`^failed to load executor-local config: ${file.replace(/[.]/g, '\\.')}:2:`),
        );
        await writeFile(file, '');
      });

      it('adds trusted project layers from the project root down to cwd, without denied keys', async () => {
        const root = join(workDir, 'repo');
        const sub = join(root, 'sub');
        const deep = join(sub, 'deep');
        const untrusted = join(workDir, 'elsewhere');
        await mkdir(join(root, '.git'), { recursive: true });
        await writeFile(join(root, '.git', 'HEAD'), 'ref: refs/heads/main\n');
        for (const dir of [root, sub, untrusted])
          await mkdir(join(dir, '.codex'), { recursive: true });
        await mkdir(deep, { recursive: true });
        await writeFile(
          join(root, '.codex', 'config.toml'),
          'model = "root"\nmodel_provider = "elsewhere"\n[mcp_servers.r]\nurl = "http://r"\ncwd = "./relative"\n',
        );
        await writeFile(join(sub, '.codex', 'config.toml'), 'model = "sub"\n');
        await writeFile(join(untrusted, '.codex', 'config.toml'), 'model = "untrusted"\n');
        await writeFile(
          join(codexHome, 'config.toml'),
          `model = "user"\n[projects."${root}"]\ntrust_level = "trusted"\n`,
        );
        const session = await open();
        const reply = await read(session, deep, [['model'], ['model_provider'], ['mcp_servers']]);
        expect(localLayers(reply, 'config')).toEqual([
          {
            source: `user (${join(codexHome, 'config.toml')})`,
            baseDir: uri(codexHome),
            toml: 'model = "user"\n',
          },
          {
            source: `project (${join(root, '.codex', 'config.toml')})`,
            baseDir: uri(join(root, '.codex')),
            toml: 'model = "root"\n\n[mcp_servers.r]\nurl = "http://r"\ncwd = "./relative"\n',
          },
          {
            source: `project (${join(sub, '.codex', 'config.toml')})`,
            baseDir: uri(join(sub, '.codex')),
            toml: 'model = "sub"\n',
          },
        ]);
        const outside = await read(session, untrusted, [['model']]);
        expect(localLayers(outside, 'config').map((layer) => layer.source)).toEqual([
          `user (${join(codexHome, 'config.toml')})`,
        ]);
      });

      it('does not take an empty .git directory for a project root', async () => {
        const root = join(workDir, 'not-a-repo');
        const deep = join(root, 'deep');
        await mkdir(join(root, '.git'), { recursive: true });
        await mkdir(join(root, '.codex'), { recursive: true });
        await mkdir(deep, { recursive: true });
        await writeFile(join(root, '.codex', 'config.toml'), 'model = "root"\n');
        await writeFile(
          join(codexHome, 'config.toml'),
          `[projects."${root}"]\ntrust_level = "trusted"\n`,
        );
        const session = await open();
        const atRoot = await read(session, root, [['model']]);
        expect(localLayers(atRoot, 'config').map((layer) => layer.source)).toEqual([
          `project (${join(root, '.codex', 'config.toml')})`,
        ]);
        const below = await read(session, deep, [['model']]);
        expect(localLayers(below, 'config')).toEqual([]);
      });
    });

    describe('http/request headers from executor environment variables', () => {
      let echo: Server | undefined;
      let base = '';
      beforeAll(async () => {
        // Answers with the request's x-* headers as JSON (Node reads header bytes as latin1,
        // so UTF-8 sent on the wire shows as one char a byte).
        echo = createServer((req, res) => {
          const picked = Object.fromEntries(
            Object.entries(req.headers).filter(([name]) => name.startsWith('x-')),
          );
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end(JSON.stringify(picked));
        });
        await new Promise<void>((resolve) => echo?.listen(0, '127.0.0.1', resolve));
        base = `http://127.0.0.1:${(echo.address() as AddressInfo).port}/`;
      });
      afterAll(async () => {
        await new Promise<void>((resolve) => (echo ? echo.close(() => resolve()) : resolve()));
      });

      it('advertises httpHeaderEnvVars and appends the variable to the value', async () => {
        const session = await open();
        const info = await session.request('environment/info', null);
        expect((info.result?.capabilities as Record<string, boolean>).httpHeaderEnvVars).toBe(true);
        let requestId = 0;
        const send = (headers: unknown[]) =>
          session.request('http/request', {
            method: 'GET',
            url: base,
            requestId: `caps-${(requestId += 1)}`,
            headers,
          });
        const sent = async (headers: unknown[]) => {
          const reply = await send(headers);
          expect(reply.error).toBeUndefined();
          return JSON.parse(
            Buffer.from(reply.result?.bodyBase64 as string, 'base64').toString('utf8'),
          ) as Record<string, string>;
        };
        expect(
          await sent([
            { name: 'x-auth', value: 'Bearer ', valueEnvVar: 'EXECRX_CAPS_TOKEN' },
            { name: 'x-plain', value: 'p', valueEnvVar: null },
            { name: 'x-utf8', value: 'é' },
          ]),
        ).toEqual({ 'x-auth': 'Bearer tok-123', 'x-plain': 'p', 'x-utf8': 'Ã©' });
        const refused = async (headers: unknown[]) => (await send(headers)).error;
        expect(
          await refused([{ name: 'x-a', value: '', valueEnvVar: 'EXECRX_CAPS_SURELY_UNSET' }]),
        ).toEqual({
          code: -32602,
          message:
            'http/request header x-a requires executor environment variable EXECRX_CAPS_SURELY_UNSET',
        });
        expect(
          await refused([{ name: 'x-a', value: 'v', valueEnvVar: 'EXECRX_CAPS_EMPTY' }]),
        ).toEqual({
          code: -32602,
          message:
            'http/request header x-a requires a non-empty executor environment variable EXECRX_CAPS_EMPTY',
        });
        expect(await refused([{ name: 'x-a', value: 'v', valueEnvVar: '' }])).toEqual({
          code: -32602,
          message: 'http/request header x-a requires executor environment variable ',
        });
        expect(await refused([{ name: 'x-a', valueEnvVar: 'EXECRX_CAPS_TOKEN' }])).toEqual({
          code: -32602,
          message: 'missing field `value`',
        });
        expect(await refused([{ name: 'x-a', value: 'a\u0001b' }])).toEqual({
          code: -32602,
          message: 'http/request header value is invalid for x-a: failed to parse header value',
        });
      });
    });

    describe('capabilityRoots/discoverV1', () => {
      /** Writes `files` (relative path → contents) under a fresh directory. */
      const tree = async (name: string, files: Record<string, string | Buffer>) => {
        const dir = join(workDir, name);
        for (const [path, contents] of Object.entries(files)) {
          await mkdir(join(dir, path, '..'), { recursive: true });
          await writeFile(join(dir, path), contents);
        }
        return dir;
      };
      const text = (path: string, contents: string) => ({ path: uri(path), contents });

      it('returns skills, plugin manifests and their configs, with warnings for what it skips', async () => {
        const skills = await tree('skills-root', {
          'skills/a/SKILL.md': '---\nname: a\n---\nA\n',
          'skills/a/agents/openai.yaml': 'interface: {}\n',
          'skills/b/SKILL.md': 'B',
          '.hidden/skills/h/SKILL.md': 'H',
          'skills/c/SKILL.md': Buffer.from([0x41, 0xe2, 0x28, 0xa1]),
          'skills/big/SKILL.md': 'x'.repeat(1024 * 1024 + 1),
          'skills/b/notes.txt': 'not a skill',
          'a/b/c/d/e/f/g/SKILL.md': 'too deep',
        });
        const plugin = await tree('plugin-root', {
          '.codex-plugin/plugin.json': '{"name":"p","mcpServers":"./mcp.json","apps":"apps.json"}',
          'mcp.json': '{"m":1}',
          '.app.json': '{}',
          'inner/.claude-plugin/plugin.json': '{"name":"inner"}',
          'inner/.codex-plugin/plugin.json': '{"name":"inner-codex","mcpServers":{}}',
          'sub/file.txt': 'x',
        });
        const session = await open();
        const reply = await session.request('capabilityRoots/discoverV1', {
          roots: [
            { id: 's', path: uri(skills) },
            { id: 'p', path: uri(plugin) },
            { id: 'sub', path: uri(join(plugin, 'sub')) },
            { id: 'file', path: uri(join(plugin, 'mcp.json')) },
            { id: 'missing', path: uri(join(plugin, 'missing')) },
            { id: 'foreign', path: 'file://host/share' },
          ],
        });
        expect(reply.error).toBeUndefined();
        const manifest = text(
          join(plugin, '.codex-plugin/plugin.json'),
          '{"name":"p","mcpServers":"./mcp.json","apps":"apps.json"}',
        );
        const none = { plugin: null, skills: [], namespaceManifests: [], warnings: [] };
        expect(reply.result?.roots).toEqual([
          {
            id: 's',
            path: uri(skills),
            plugin: null,
            skills: [
              {
                instructions: text(join(skills, '.hidden/skills/h/SKILL.md'), 'H'),
                metadata: null,
              },
              {
                instructions: text(join(skills, 'skills/a/SKILL.md'), '---\nname: a\n---\nA\n'),
                metadata: text(join(skills, 'skills/a/agents/openai.yaml'), 'interface: {}\n'),
              },
              { instructions: text(join(skills, 'skills/b/SKILL.md'), 'B'), metadata: null },
            ],
            namespaceManifests: [],
            warnings: [
              `capability file ${uri(join(skills, 'skills/big/SKILL.md'))} exceeds the 1048576-byte limit`,
              `capability file ${uri(join(skills, 'skills/c/SKILL.md'))} is not UTF-8: invalid utf-8 sequence of 1 bytes from index 1`,
            ],
            error: null,
          },
          {
            id: 'p',
            path: uri(plugin),
            plugin: {
              manifest,
              mcpConfig: text(join(plugin, 'mcp.json'), '{"m":1}'),
              // An unusable `apps` is reported, and the default `.app.json` is used instead.
              appsConfig: text(join(plugin, '.app.json'), '{}'),
            },
            skills: [],
            namespaceManifests: [
              manifest,
              text(
                join(plugin, 'inner/.codex-plugin/plugin.json'),
                '{"name":"inner-codex","mcpServers":{}}',
              ),
            ],
            warnings: [`ignoring apps in ${manifest.path}: path must start with \`./\``],
            error: null,
          },
          {
            id: 'sub',
            path: uri(join(plugin, 'sub')),
            ...none,
            namespaceManifests: [manifest],
            error: null,
          },
          {
            id: 'file',
            path: uri(join(plugin, 'mcp.json')),
            ...none,
            error: `capability root ${uri(join(plugin, 'mcp.json'))} is not a directory`,
          },
          {
            id: 'missing',
            path: uri(join(plugin, 'missing')),
            ...none,
            error: `failed to inspect capability root ${uri(join(plugin, 'missing'))}: No such file or directory (os error 2)`,
          },
          {
            id: 'foreign',
            path: 'file://host/share',
            ...none,
            error: `failed to inspect capability root file://host/share: 'file://host/share' is invalid on 'linux'`,
          },
        ]);
      });

      it('refuses more than 128 roots and a malformed root URI', async () => {
        const session = await open();
        const roots = Array.from({ length: 129 }, (_, i) => ({ id: `${i}`, path: uri(workDir) }));
        expect((await session.request('capabilityRoots/discoverV1', { roots })).error).toEqual({
          code: -32600,
          message: 'capability root discovery accepts at most 128 roots',
        });
        expect(
          (
            await session.request('capabilityRoots/discoverV1', {
              roots: [{ id: 'a', path: 'rel' }],
            })
          ).error,
        ).toEqual({ code: -32602, message: 'invalid URI: relative URL without a base' });
        expect((await session.request('capabilityRoots/discoverV1', { roots: [] })).result).toEqual(
          {
            roots: [],
          },
        );
      });
    });

    describe('capabilities/discoverV2', () => {
      /** Writes `files` (relative path → contents) under `dir`. */
      const writeTree = async (dir: string, files: Record<string, string>) => {
        for (const [path, contents] of Object.entries(files)) {
          await mkdir(join(dir, path, '..'), { recursive: true });
          await writeFile(join(dir, path), contents);
        }
      };
      const skill = (name: string, description: string) =>
        `---\nname: ${name}\ndescription: ${description}\n---\nbody\n`;

      it('reads skills of $CODEX_HOME/skills and plugins of the plugin cache', async () => {
        const skills = join(codexHome, 'skills');
        await writeTree(skills, {
          '.system/sys/SKILL.md': skill('sys', 'system skill'),
          'full/SKILL.md':
            '---\nname: "two\\nlines"\ndescription: |\n  line one\n  line two\nmetadata:\n  short-description: short\n---\n',
          'full/agents/openai.yaml':
            'dependencies:\n  tools:\n    - type: env_var\n      value: FOO\n      description: a var\npolicy:\n  products: [codex]\n',
          'loose/SKILL.md': '---\nname: [oops\ndescription: {a: 1}\n---\n',
          'unnamed/SKILL.md': '---\ndescription: named by its directory\n---\n',
          'a/b/c/d/e/f/deep/SKILL.md': skill('deep', 'too deep'),
          'a/b/c/d/e/six/SKILL.md': skill('six', 'deep enough'),
          'nodesc/SKILL.md': '---\nname: nodesc\ndescription: ""\n---\n',
          'nofront/SKILL.md': 'no front matter\n',
        });
        const plugin = join(codexHome, 'plugins', 'cache', 'market', 'p1');
        await writeTree(plugin, {
          '1.0.0/.codex-plugin/plugin.json': '{"name":"old"}\n',
          'local/.codex-plugin/plugin.json':
            '{"name":"named","interface":{"displayName":"Pretty"}}\n',
          'local/.mcp.json': '{"mcpServers":{}}\n',
          'local/skills/ps/SKILL.md': skill('ps', 'plugin skill'),
          'local/extra/xs/SKILL.md': skill('xs', 'found by the walk'),
        });
        const session = await open();
        type Result = {
          plugins: unknown[];
          skills: { discoveryRoot: { id: string } }[];
          warnings: string[];
        };
        // The binary keeps the plugin cache's layout from a watcher, so a plugin written just
        // now may show up a moment later (FINDINGS): ask again for up to WAIT_MS.
        let result: Result | undefined;
        for (const deadline = Date.now() + WAIT_MS; ; await sleep(100)) {
          const response = await session.request('capabilities/discoverV2', { cwd: uri(workDir) });
          result = response.result as Result;
          if (result.plugins.length > 0 || Date.now() > deadline) break;
        }
        const root = { id: 'codex-home-skills', path: uri(skills) };
        const plain = {
          shortDescription: null,
          discoveryRoot: root,
          dependencies: null,
          policy: null,
        };
        expect(result.skills.filter((s) => s.discoveryRoot.id === 'codex-home-skills')).toEqual([
          {
            ...plain,
            name: 'sys',
            description: 'system skill',
            path: uri(join(skills, '.system/sys/SKILL.md')),
          },
          {
            ...plain,
            name: 'six',
            description: 'deep enough',
            path: uri(join(skills, 'a/b/c/d/e/six/SKILL.md')),
          },
          {
            ...plain,
            name: 'two lines',
            description: 'line one line two',
            shortDescription: 'short',
            path: uri(join(skills, 'full/SKILL.md')),
            dependencies: {
              tools: [
                {
                  type: 'env_var',
                  value: 'FOO',
                  description: 'a var',
                  transport: null,
                  command: null,
                  url: null,
                  oauthCallbackPort: null,
                },
              ],
            },
            policy: { allowImplicitInvocation: null, products: ['codex'] },
          },
          {
            ...plain,
            name: '[oops',
            description: '{a: 1}',
            path: uri(join(skills, 'loose/SKILL.md')),
          },
          {
            ...plain,
            name: 'unnamed',
            description: 'named by its directory',
            path: uri(join(skills, 'unnamed/SKILL.md')),
          },
        ]);
        const versionRoot = join(plugin, 'local');
        const pluginSkill = (name: string, description: string, path: string) => ({
          name,
          description,
          shortDescription: null,
          path: uri(join(versionRoot, path)),
          dependencies: null,
          policy: null,
        });
        expect(result.plugins).toEqual([
          {
            id: 'p1@market',
            displayName: 'Pretty',
            remotePluginId: null,
            version: 'local',
            root: uri(versionRoot),
            files: {
              manifest: {
                path: uri(join(versionRoot, '.codex-plugin/plugin.json')),
                contents: '{"name":"named","interface":{"displayName":"Pretty"}}\n',
              },
              mcpConfig: {
                path: uri(join(versionRoot, '.mcp.json')),
                contents: '{"mcpServers":{}}\n',
              },
              appsConfig: null,
            },
            skills: [
              pluginSkill('named:xs', 'found by the walk', 'extra/xs/SKILL.md'),
              pluginSkill('named:ps', 'plugin skill', 'skills/ps/SKILL.md'),
            ],
          },
        ]);
        expect(result.warnings).toEqual([
          'some capability metadata could not be loaded; discovery may be incomplete',
        ]);
        await rm(skills, { recursive: true, force: true });
        await rm(join(codexHome, 'plugins'), { recursive: true, force: true });
      });

      it('rejects a request without cwd or with a relative one', async () => {
        const session = await open();
        expect((await session.request('capabilities/discoverV2', {})).error).toEqual({
          code: -32602,
          message: 'missing field `cwd`',
        });
        expect((await session.request('capabilities/discoverV2', { cwd: 'rel' })).error).toEqual({
          code: -32602,
          message: 'invalid URI: relative URL without a base',
        });
      });
    });

    describe('fs/watchMissing', () => {
      let dirCount = 0;
      /** A fresh empty directory for one test. */
      const freshDir = async (): Promise<string> => {
        const dir = join(workDir, `watch-${(dirCount += 1)}`);
        await mkdir(dir, { recursive: true });
        return dir;
      };
      const watchMissing = (session: RawSession, params: Record<string, unknown>) =>
        session.request('fs/watchMissing', params);
      const changed = (session: RawSession, watchId: number) =>
        session.waitFor(
          (message) =>
            message.method === 'fs/missingChanged' && message.params?.watchId === watchId,
        );
      const quietly = async (session: RawSession): Promise<Message[]> => {
        await sleep(QUIET_MS);
        return session.notifications('fs/missingChanged');
      };

      it('notifies once when a missing path appears', async () => {
        const dir = await freshDir();
        const session = await open();
        const reply = await watchMissing(session, { watchId: 1, missing: [uri(join(dir, 'a'))] });
        expect(reply.result).toEqual({ watching: true });
        await writeFile(join(dir, 'a'), 'x');
        expect((await changed(session, 1)).params).toEqual({ watchId: 1 });
        await rm(join(dir, 'a'));
        await writeFile(join(dir, 'a'), 'y');
        expect(await quietly(session)).toHaveLength(1);
      });

      it('fires when an intermediate directory or the present path changes, not inside it', async () => {
        const dir = await freshDir();
        await mkdir(join(dir, 'present'));
        await writeFile(join(dir, 'file'), 'x');
        const session = await open();
        expect(
          (await watchMissing(session, { watchId: 1, missing: [uri(join(dir, 'x', 'y', 'z'))] }))
            .result,
        ).toEqual({ watching: true });
        await mkdir(join(dir, 'x'));
        await changed(session, 1);

        expect(
          (
            await watchMissing(session, {
              watchId: 2,
              missing: [uri(join(dir, 'q'))],
              present: uri(join(dir, 'present')),
            })
          ).result,
        ).toEqual({ watching: true });
        await writeFile(join(dir, 'present', 'inner'), '');
        expect(await quietly(session)).toHaveLength(1);
        await rm(join(dir, 'present'), { recursive: true });
        await changed(session, 2);

        expect(
          (
            await watchMissing(session, {
              watchId: 3,
              missing: [uri(join(dir, 'q'))],
              present: uri(join(dir, 'file')),
            })
          ).result,
        ).toEqual({ watching: true });
        await writeFile(join(dir, 'file'), 'changed');
        await changed(session, 3);
      });

      it('keeps one watch per connection: ids must grow, a new request replaces the watch', async () => {
        const dir = await freshDir();
        await writeFile(join(dir, 'exists'), '');
        const session = await open();
        const watch = (watchId: number, name: string) =>
          watchMissing(session, { watchId, missing: [uri(join(dir, name))] });
        expect((await watch(5, 'a')).result).toEqual({ watching: true });
        // Not above 5: refused, and watch 5 stays.
        expect((await watch(5, 'b')).result).toEqual({ watching: false });
        expect((await watch(3, 'b')).result).toEqual({ watching: false });
        await writeFile(join(dir, 'a'), '');
        await changed(session, 5);
        // A refused request with a new id still ends the watch before it.
        expect((await watch(6, 'c')).result).toEqual({ watching: true });
        expect((await watch(7, 'exists')).result).toEqual({ watching: false });
        await writeFile(join(dir, 'c'), '');
        // Watches 8 and 9: the later one replaces the earlier.
        expect((await watch(8, 'd')).result).toEqual({ watching: true });
        expect((await watch(9, 'd')).result).toEqual({ watching: true });
        await writeFile(join(dir, 'd'), '');
        await changed(session, 9);
        expect((await quietly(session)).map((message) => message.params?.watchId)).toEqual([5, 9]);
      });

      it('answers watching:false for what it cannot watch', async () => {
        const dir = await freshDir();
        await writeFile(join(dir, 'exists'), '');
        await symlink(join(dir, 'nowhere'), join(dir, 'dangling'));
        const session = await open();
        let watchId = 0;
        const watching = async (params: Record<string, unknown>) =>
          (await watchMissing(session, { watchId: (watchId += 1), ...params })).result?.watching;
        const missingUri = uri(join(dir, 'missing'));
        expect(await watching({ missing: [] })).toBe(false);
        expect(await watching({ missing: [uri(join(dir, 'exists'))] })).toBe(false);
        expect(await watching({ missing: [uri(join(dir, 'dangling'))] })).toBe(false);
        expect(await watching({ missing: [missingUri], present: uri(join(dir, 'gone')) })).toBe(
          false,
        );
        expect(await watching({ missing: [missingUri], present: null })).toBe(true);
        expect(await watching({ missing: Array(64).fill(missingUri) })).toBe(true);
        expect(await watching({ missing: Array(65).fill(missingUri) })).toBe(false);
        // At most 64 watched directories: every existing ancestor of every missing path.
        const ancestors = dir.split('/').length; // `dir` and each directory above it, `/` included
        const subdirs = 64 - ancestors;
        for (let i = 0; i <= subdirs; i += 1) await mkdir(join(dir, `d${i}`));
        const inSubdirs = (count: number) =>
          Array.from({ length: count }, (_, i) => uri(join(dir, `d${i}`, 'x')));
        expect(await watching({ missing: inSubdirs(subdirs) })).toBe(true);
        expect(await watching({ missing: inSubdirs(subdirs + 1) })).toBe(false);
      });

      it('rejects malformed params with -32602', async () => {
        const session = await open();
        const reply = (params: unknown) => session.request('fs/watchMissing', params);
        expect((await reply({ watchId: 1, missing: ['relative/path'] })).error).toEqual({
          code: -32602,
          message: 'invalid URI: relative URL without a base',
        });
        expect((await reply({ watchId: -1, missing: [] })).error).toEqual({
          code: -32602,
          message: 'invalid number',
        });
        expect((await reply({ watchId: 1 })).error).toEqual({
          code: -32602,
          message: 'missing field `missing`',
        });
        expect((await reply({ watchId: 'w1', missing: [] })).error?.code).toBe(-32602);
      });

      it('belongs to the connection: a resumed session does not carry the watch', async () => {
        const dir = await freshDir();
        const first = await open();
        expect(
          (await watchMissing(first, { watchId: 5, missing: [uri(join(dir, 'a'))] })).result,
        ).toEqual({ watching: true });
        first.close();
        await sleep(200);
        const second = await open(first.sessionId);
        expect(second.sessionId).toBe(first.sessionId);
        await writeFile(join(dir, 'a'), '');
        // A lower id is accepted again: the id order starts afresh on the new connection.
        expect(
          (await watchMissing(second, { watchId: 1, missing: [uri(join(dir, 'b'))] })).result,
        ).toEqual({ watching: true });
        expect(await quietly(second)).toEqual([]);
      });
    });
  });
}
