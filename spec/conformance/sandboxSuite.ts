/**
 * The sandbox conformance suite: what a request carrying codex's managed permission profile
 * (the `sandbox` of `process/start` and `fs/*`, as `codex exec -s workspace-write` and
 * `-s read-only` send it) may and may not do, asserted on the wire and on the host disk.
 * Written once, run against the real `codex exec-server` 0.169.0 (the judge) and our
 * executor; no assertion branches on the target (differences go to DIVERGENCES.md).
 *
 * The workspace lives outside /tmp (under $HOME/.cache), since /tmp is itself a writable
 * root of the workspace-write profile.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { RawClient, outputText, startParams, type WireMessage } from '../server/rawClient.js';
import type { ExecServerFactory, RunningExecServer } from '../support/codexExecServer.js';
import {
  hostProcessesMatching,
  readOnly,
  special,
  workspaceWrite,
  type Entry,
} from '../support/sandboxProfiles.js';

const WAIT_MS = 20_000;

interface Finished {
  output: string;
  exitCode: number;
  sandboxDenied: boolean;
}

export function describeSandboxConformance(name: string, factory: ExecServerFactory): void {
  describe(`sandbox conformance: ${name}`, () => {
    let server: RunningExecServer;
    let client: RawClient;
    let base: string;
    let work: string;
    let outside: string;
    let counter = 0;

    beforeAll(async () => {
      const cache = join(homedir(), '.cache');
      mkdirSync(cache, { recursive: true });
      base = mkdtempSync(join(cache, 'execrx-sandbox-'));
      work = join(base, 'work');
      outside = join(base, 'outside');
      mkdirSync(join(work, '.git'), { recursive: true });
      mkdirSync(outside);
      writeFileSync(join(work, 'readme'), 'inside\n');
      writeFileSync(join(outside, 'secret'), 'secret\n');
      server = await factory();
      client = await RawClient.connect(server.url);
      await client.handshake();
    }, 60_000);

    afterAll(async () => {
      await client?.close();
      await server?.stop();
      if (base) rmSync(base, { recursive: true, force: true });
    });

    const uri = (path: string): string => `file://${path}`;

    async function start(
      argv: string[],
      sandbox: Entry | null,
      extra: Record<string, unknown> = {},
    ): Promise<{ processId: string; reply: WireMessage }> {
      counter += 1;
      const processId = `sandbox-${counter}`;
      const reply = await client.request(
        'process/start',
        startParams(processId, argv, { cwd: uri(work), sandbox, ...extra }),
        WAIT_MS,
      );
      return { processId, reply };
    }

    async function run(argv: string[], sandbox: Entry | null): Promise<Finished> {
      const { processId, reply } = await start(argv, sandbox);
      expect(reply.error).toBeUndefined();
      await client.waitClosedNotification(processId, WAIT_MS);
      const exited = client.notifications('process/exited', processId)[0]?.params ?? {};
      return {
        output: outputText(client, processId),
        exitCode: exited.exitCode as number,
        sandboxDenied: exited.sandboxDenied as boolean,
      };
    }

    const sh = (script: string): string[] => ['/bin/sh', '-c', script];

    it('reports sandboxType linuxSeccomp for a sandboxed start and none without', async () => {
      const sandboxed = await start(['/bin/true'], workspaceWrite(work));
      expect(sandboxed.reply.result).toEqual({
        processId: sandboxed.processId,
        sandboxType: 'linuxSeccomp',
      });
      const plain = await start(['/bin/true'], null);
      expect(plain.reply.result).toEqual({ processId: plain.processId, sandboxType: 'none' });
      await client.waitClosedNotification(sandboxed.processId, WAIT_MS);
      await client.waitClosedNotification(plain.processId, WAIT_MS);
    });

    it('workspace-write: a write inside the workspace succeeds', async () => {
      const result = await run(sh('echo made > inside && cat inside'), workspaceWrite(work));
      expect(result).toEqual({ output: 'made\n', exitCode: 0, sandboxDenied: false });
      expect(readFileSync(join(work, 'inside'), 'utf8')).toBe('made\n');
    });

    it('workspace-write: a write outside fails with EROFS, sandboxDenied, and leaves no file', async () => {
      const target = join(outside, 'escaped');
      const result = await run(sh(`echo x > ${target}`), workspaceWrite(work));
      expect(result.exitCode).toBe(2);
      expect(result.output).toContain('Read-only file system');
      expect(result.sandboxDenied).toBe(true);
      expect(existsSync(target)).toBe(false);
    });

    it('a failing command without denial words is not sandboxDenied', async () => {
      const result = await run(sh('exit 3'), workspaceWrite(work));
      expect(result).toEqual({ output: '', exitCode: 3, sandboxDenied: false });
    });

    it('workspace-write: /tmp is writable; read-only: it is not', async () => {
      const target = `/tmp/execrx-sandbox-${process.pid}-${Date.now()}`;
      try {
        const writable = await run(sh(`echo t > ${target}`), workspaceWrite(work));
        expect(writable.exitCode).toBe(0);
        expect(readFileSync(target, 'utf8')).toBe('t\n');
        rmSync(target);
        const refused = await run(sh(`echo t > ${target}`), readOnly(work));
        expect(refused.exitCode).toBe(2);
        expect(refused.output).toContain('Read-only file system');
        expect(existsSync(target)).toBe(false);
      } finally {
        rmSync(target, { force: true });
      }
    });

    it('workspace-write: .git under the workspace stays read-only', async () => {
      const result = await run(sh('echo x > .git/planted'), workspaceWrite(work));
      expect(result.exitCode).toBe(2);
      expect(result.output).toContain('Read-only file system');
      expect(existsSync(join(work, '.git', 'planted'))).toBe(false);
    });

    it('workspace-write: a missing .codex cannot be created, and no trace of it is left', async () => {
      const result = await run(sh('mkdir -p .codex/x; echo rc=$?'), workspaceWrite(work));
      expect(result.output).toContain('Read-only file system');
      expect(result.output).toContain('rc=1');
      // The mount point the sandbox needed on the host is removed once the process closed.
      const deadline = Date.now() + 5_000;
      while (existsSync(join(work, '.codex')) && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      expect(existsSync(join(work, '.codex'))).toBe(false);
    });

    it('read-only: reads work, writes in the workspace fail', async () => {
      const read = await run(sh('cat readme'), readOnly(work));
      expect(read).toEqual({ output: 'inside\n', exitCode: 0, sandboxDenied: false });
      const write = await run(sh('echo x > written'), readOnly(work));
      expect(write.exitCode).toBe(2);
      expect(write.output).toContain('Read-only file system');
      expect(existsSync(join(work, 'written'))).toBe(false);
    });

    it("restricted network: the executor's own loopback port is unreachable", async () => {
      const port = new URL(server.url).port;
      const reachable = await run(
        ['/bin/bash', '--norc', '-c', `exec 3<>/dev/tcp/127.0.0.1/${port} && echo connected`],
        null,
      );
      expect(reachable.output).toContain('connected');
      const result = await run(
        ['/bin/bash', '--norc', '-c', `exec 3<>/dev/tcp/127.0.0.1/${port} && echo connected`],
        workspaceWrite(work),
      );
      expect(result.exitCode).not.toBe(0);
      expect(result.output).not.toContain('connected');
      // A seccomp filter refuses the socket itself: the words codex's denial check looks for.
      expect(result.output).toContain('socket: Operation not permitted');
      expect(result.sandboxDenied).toBe(true);
    });

    it('PID namespace: the command sees few processes and cannot signal the host', async () => {
      const result = await run(
        sh(`echo pid=$$; kill -0 ${process.pid} 2>/dev/null; echo kill=$?`),
        workspaceWrite(work),
      );
      expect(result.output).toContain('pid=2\n');
      expect(result.output).toContain('kill=1\n');
    });

    it('terminate kills everything the sandboxed command started', async () => {
      const marker = `${31 + (process.pid % 1000) / 1000}`;
      const { processId, reply } = await start(
        sh(`sleep ${marker} & sleep ${marker}`),
        workspaceWrite(work),
      );
      expect(reply.error).toBeUndefined();
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(await client.call('process/terminate', { processId })).toEqual({ running: true });
      await client.waitClosedNotification(processId, WAIT_MS);
      const exited = client.notifications('process/exited', processId)[0]?.params;
      expect(exited?.exitCode).toBe(137);
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(hostProcessesMatching(`sleep ${marker}`)).toBe('');
    });

    it('interrupt ends a sandboxed command (the sandbox, not the command, gets the signal)', async () => {
      for (const [tty, exitCode] of [
        [false, 130],
        [true, 1],
      ] as const) {
        const { processId, reply } = await start(
          sh('trap "echo trapped; exit 7" INT; sleep 5 & wait'),
          workspaceWrite(work),
          { tty },
        );
        expect(reply.error).toBeUndefined();
        await new Promise((resolve) => setTimeout(resolve, 400));
        expect(await client.call('process/signal', { processId, signal: 'interrupt' })).toEqual({});
        await client.waitClosedNotification(processId, WAIT_MS);
        const exited = client.notifications('process/exited', processId)[0]?.params;
        expect({ tty, exitCode: exited?.exitCode }).toEqual({ tty, exitCode });
        expect(outputText(client, processId)).not.toContain('trapped');
      }
    });

    it('a tty session runs under the sandbox', async () => {
      const result = await run(sh('echo x > ../outside/tty; echo rc=$?'), null);
      expect(result.exitCode).toBe(0); // unsandboxed write works: the target is writable
      rmSync(join(outside, 'tty'), { force: true });
      const { processId, reply } = await start(
        sh('echo x > ../outside/tty; echo rc=$?'),
        workspaceWrite(work),
        { tty: true },
      );
      expect(reply.error).toBeUndefined();
      await client.waitClosedNotification(processId, WAIT_MS);
      expect(outputText(client, processId)).toContain('Read-only file system');
      expect(outputText(client, processId)).toContain('rc=2');
      expect(existsSync(join(outside, 'tty'))).toBe(false);
    });

    describe('fs methods', () => {
      const refusedWrite = { code: -32603, message: 'Read-only file system (os error 30)' };

      it('fs/writeFile: inside succeeds; outside, .git and read-only are refused', async () => {
        const ww = workspaceWrite(work);
        const inside = await client.request('fs/writeFile', {
          path: uri(join(work, 'fs-inside')),
          dataBase64: 'aGk=',
          sandbox: ww,
        });
        expect(inside.result).toEqual({});
        expect(readFileSync(join(work, 'fs-inside'), 'utf8')).toBe('hi');
        for (const [path, sandbox] of [
          [join(outside, 'fs-outside'), ww],
          [join(work, '.git', 'fs-git'), ww],
          [join(work, '.codex', 'fs-codex'), ww],
          [join(work, 'fs-read-only'), readOnly(work)],
        ] as const) {
          const reply = await client.request('fs/writeFile', {
            path: uri(path),
            dataBase64: 'aGk=',
            sandbox,
          });
          expect({ path, error: reply.error }).toEqual({ path, error: refusedWrite });
          expect(existsSync(path)).toBe(false);
        }
      });

      it('fs/readFile and fs/getMetadata work under read-only', async () => {
        const ro = readOnly(work);
        expect(
          await client.call('fs/readFile', { path: uri(join(work, 'readme')), sandbox: ro }),
        ).toEqual({ dataBase64: Buffer.from('inside\n').toString('base64') });
        const metadata = await client.call<{ isFile: boolean }>('fs/getMetadata', {
          path: uri(join(work, 'readme')),
          sandbox: ro,
        });
        expect(metadata.isFile).toBe(true);
      });

      it('fs/createDirectory, fs/remove, fs/copy and fs/open follow the same rule', async () => {
        const ww = workspaceWrite(work);
        expect(
          (
            await client.request('fs/createDirectory', {
              path: uri(join(outside, 'dir')),
              recursive: true,
              sandbox: ww,
            })
          ).error,
        ).toEqual(refusedWrite);
        expect(
          (
            await client.request('fs/remove', {
              path: uri(join(work, 'readme')),
              recursive: true,
              force: true,
              sandbox: readOnly(work),
            })
          ).error,
        ).toEqual(refusedWrite);
        expect(existsSync(join(work, 'readme'))).toBe(true);
        expect(
          (
            await client.request('fs/copy', {
              sourcePath: uri(join(work, 'readme')),
              destinationPath: uri(join(outside, 'copied')),
              recursive: false,
              sandbox: ww,
            })
          ).error,
        ).toEqual(refusedWrite);
        expect(
          (
            await client.request('fs/open', {
              handleId: 'sandboxed',
              path: uri(join(outside, 'opened')),
              mode: 'replace',
              sandbox: ww,
            })
          ).error,
        ).toEqual(refusedWrite);
        expect(existsSync(join(outside, 'opened'))).toBe(false);
        expect(
          (
            await client.request('fs/copy', {
              sourcePath: uri(join(work, 'readme')),
              destinationPath: uri(join(work, 'copied')),
              recursive: false,
              sandbox: ww,
            })
          ).result,
        ).toEqual({});
      });

      it('fs/open streams under a sandbox: blocks inside it, Permission denied outside', async () => {
        writeFileSync(join(work, 'stream-source'), 'stream me\n');
        writeFileSync(join(outside, 'stream-secret'), 'secret\n');
        const opened = await client.request('fs/open', {
          handleId: 'sandboxed-read',
          path: uri(join(work, 'stream-source')),
          mode: 'read',
          sandbox: readOnly(work),
        });
        expect(opened.result).toEqual({ handleId: 'sandboxed-read' });
        const block = await client.request('fs/readBlock', {
          handleId: 'sandboxed-read',
          offset: 0,
          len: 100,
        });
        const chunk = (block.result as { chunk: string }).chunk;
        expect(Buffer.from(chunk, 'base64').toString()).toBe('stream me\n');
        expect((await client.request('fs/close', { handleId: 'sandboxed-read' })).result).toEqual(
          {},
        );

        const writing = await client.request('fs/open', {
          handleId: 'sandboxed-write',
          path: uri(join(work, 'stream-target')),
          mode: 'replace',
          sandbox: workspaceWrite(work),
        });
        expect(writing.result).toEqual({ handleId: 'sandboxed-write' });
        const written = await client.request('fs/writeBlock', {
          handleId: 'sandboxed-write',
          offset: 0,
          chunk: Buffer.from('streamed\n').toString('base64'),
        });
        expect(written.result).toEqual({});
        expect((await client.request('fs/close', { handleId: 'sandboxed-write' })).result).toEqual(
          {},
        );
        expect(readFileSync(join(work, 'stream-target'), 'utf8')).toBe('streamed\n');

        const denied = readOnly(work, [
          { path: { type: 'path', path: uri(outside) }, access: 'deny' },
        ]);
        const refused = await client.request('fs/open', {
          handleId: 'sandboxed-denied',
          path: uri(join(outside, 'stream-secret')),
          mode: 'read',
          sandbox: denied,
        });
        expect(refused.error).toEqual({ code: -32600, message: 'Permission denied (os error 13)' });
      });

      it('a deny entry: reads fail with EACCES, for fs/readFile and for processes', async () => {
        const denied = readOnly(work, [
          { path: { type: 'path', path: uri(outside) }, access: 'deny' },
        ]);
        const reply = await client.request('fs/readFile', {
          path: uri(join(outside, 'secret')),
          sandbox: denied,
        });
        expect(reply.error).toEqual({ code: -32600, message: 'Permission denied (os error 13)' });
        const result = await run(sh(`cat ${join(outside, 'secret')}`), denied);
        expect(result.exitCode).toBe(1);
        expect(result.output).toContain('Permission denied');
        expect(result.output).not.toContain('secret\n');
      });
    });

    describe('a denied directory inside a readable tree', () => {
      let tree: string;
      let denied: Entry;

      beforeAll(() => {
        tree = join(base, 'tree');
        mkdirSync(join(tree, 'hidden', 'deeper'), { recursive: true });
        writeFileSync(join(tree, 'hidden', 'key'), 'key\n');
        writeFileSync(join(tree, 'open'), 'open\n');
        denied = workspaceWrite(work, [
          { path: { type: 'path', path: uri(join(tree, 'hidden')) }, access: 'deny' },
        ]);
      });

      it('fs/walk lists it, reports Permission denied for it, and does not go in', async () => {
        const result = await client.call<{
          entries: { path: string; kind: string }[];
          errors: { path: string; message: string }[];
          truncated: boolean;
        }>('fs/walk', {
          path: uri(tree),
          options: {
            maxDepth: 4,
            maxDirectories: 100,
            maxEntries: 100,
            followDirectorySymlinks: false,
          },
          sandbox: denied,
        });
        expect(result.entries).toEqual([
          { path: uri(join(tree, 'hidden')), kind: 'directory' },
          { path: uri(join(tree, 'open')), kind: 'file' },
        ]);
        expect(result.errors).toEqual([
          { path: uri(join(tree, 'hidden')), message: 'Permission denied (os error 13)' },
        ]);
      });

      it('fs/readDirectory lists its name; reading inside it is denied', async () => {
        const listing = await client.call<{ entries: { fileName: string }[] }>('fs/readDirectory', {
          path: uri(tree),
          sandbox: denied,
        });
        expect(listing.entries.map((entry) => entry.fileName).sort()).toEqual(['hidden', 'open']);
        const inside = await client.request('fs/readDirectory', {
          path: uri(join(tree, 'hidden')),
          sandbox: denied,
        });
        expect(inside.error).toEqual({ code: -32600, message: 'Permission denied (os error 13)' });
      });

      it('a recursive fs/copy of the tree is denied, and its secret is not copied', async () => {
        const destination = join(work, 'tree-copy');
        const reply = await client.request('fs/copy', {
          sourcePath: uri(tree),
          destinationPath: uri(destination),
          recursive: true,
          sandbox: denied,
        });
        expect(reply.error).toEqual({ code: -32600, message: 'Permission denied (os error 13)' });
        expect(existsSync(join(destination, 'hidden', 'key'))).toBe(false);
      });
    });

    describe('malformed contexts', () => {
      it('windowsSandboxLevel is required', async () => {
        const { windowsSandboxLevel: _dropped, ...rest } = workspaceWrite(work);
        const { reply } = await start(['/bin/true'], rest);
        expect(reply.error).toEqual({
          code: -32602,
          message: 'missing field `windowsSandboxLevel`',
        });
      });

      it('missing_path_behavior knows only skip', async () => {
        const sandbox = readOnly(work, [
          { path: special('project_roots', 'x'), access: 'read', missing_path_behavior: 'error' },
        ]);
        const { reply } = await start(['/bin/true'], sandbox);
        expect(reply.error).toEqual({
          code: -32602,
          message: 'unknown variant `error`, expected `skip`',
        });
      });

      it('path entries are file: URIs', async () => {
        const sandbox = readOnly(work, [{ path: { type: 'path', path: outside }, access: 'read' }]);
        const { reply } = await start(['/bin/true'], sandbox);
        expect(reply.error).toEqual({
          code: -32602,
          message: 'invalid URI: relative URL without a base',
        });
      });
    });
  });
}
