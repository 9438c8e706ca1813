/**
 * A file walk through `client.fs`: build a small tree on the executor, list it with one
 * `fs/walk`, read each file's size with `fs/getMetadata`, then remove the tree.
 *
 *   npx tsx examples/file-walk.ts
 *   EXECRX_URL=ws://127.0.0.1:PORT npx tsx examples/file-walk.ts   # on your executor's /tmp
 *
 * Paths are the executor's native paths; the client turns them into `file://` URIs.
 */
import { firstValueFrom, lastValueFrom, switchMap } from 'rxjs';
import { ExecServerClient, connectWebSocket } from 'execrx';
import { startExecServer } from 'execrx/server';

const server = process.env.EXECRX_URL
  ? undefined
  : await startExecServer({ listen: 'ws://127.0.0.1:0' });
const client = await firstValueFrom(
  connectWebSocket(process.env.EXECRX_URL ?? server!.url).pipe(
    switchMap((transport) => ExecServerClient.connect(transport, { clientName: 'file-walk' })),
  ),
);
const root = `/tmp/execrx-file-walk-${process.pid}`;
try {
  const fs = client.fs;
  await lastValueFrom(fs.createDirectory(`${root}/src/lib`, { recursive: true }), {
    defaultValue: undefined,
  });
  await lastValueFrom(fs.writeFile(`${root}/README.md`, '# demo\n'), { defaultValue: undefined });
  await lastValueFrom(fs.writeFile(`${root}/src/main.ts`, 'console.log(1);\n'), {
    defaultValue: undefined,
  });
  await lastValueFrom(fs.writeFile(`${root}/src/lib/util.ts`, 'export {};\n'), {
    defaultValue: undefined,
  });

  // Breadth first, bounded: the executor stops at these limits and says so (`truncated`).
  const walk = await firstValueFrom(
    fs.walk(root, {
      maxDepth: 8,
      maxDirectories: 100,
      maxEntries: 1_000,
      followDirectorySymlinks: false,
    }),
  );
  const entries = [...walk.entries].sort((a, b) => a.path.localeCompare(b.path));
  for (const entry of entries) {
    const relative = entry.path.slice(root.length + 1);
    if (entry.kind === 'directory') {
      console.log(`${relative}/`);
    } else {
      const { size } = await firstValueFrom(fs.getMetadata(entry.path));
      console.log(`${relative} (${size} bytes)`);
    }
  }
  console.log(
    `${entries.length} entries, ${walk.errors.length} errors, truncated: ${walk.truncated}`,
  );
} finally {
  await lastValueFrom(client.fs.remove(root), { defaultValue: undefined });
  client.close();
  await server?.close();
}
