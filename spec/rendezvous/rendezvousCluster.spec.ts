/**
 * A rendezvous cluster on loopback, every part a real process: redis-server, three
 * `execrx rendezvous --store` nodes behind one front address, `execrx serve --remote` and
 * `codex exec-server --remote` executors, and clients through every node. A node killed
 * (SIGKILL) mid-stream and one drained (SIGTERM) mid-stream: executors move to another node
 * and LazyRemoteExecServerClient sessions recover with every byte of output, once, in order.
 * Redis restarted mid-stream: the holding nodes put their registrations back and streams go
 * on; registrations no node holds come back by the executors registering again. Needs
 * `npm run build` (the nodes run the CLI bundle).
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { tmpdir } from 'node:os';
import { filter, firstValueFrom, lastValueFrom, switchMap, timeout, toArray } from 'rxjs';
import { ExecServerClient } from '../../src/client/index.js';
import { LazyRemoteExecServerClient, noiseRendezvous } from '../../src/environment/index.js';
import type { SessionState } from '../../src/client/index.js';
import { NoiseChannelIdentity } from '../../src/noise/index.js';
import { EnvironmentRegistryClient, RegistryConnectProvider } from '../../src/registry/index.js';
import { connectNoiseHarness } from '../../src/transport/noiseHarnessTransport.js';
import { assertBuilt } from '../cli/support/runCli.js';
import {
  CLUSTER_HARNESS_TOKEN,
  type ClusterNode,
  type ClusterProcess,
  type Front,
  startCodexClusterRemote,
  startFront,
  startNode,
  startTsRemote,
  waitAttached,
} from '../support/rendezvousCluster.js';
import { type TestRedis, startTestRedis } from '../support/rendezvousRedis.js';

const ENVIRONMENTS = ['cluster-ts', 'cluster-codex'] as const;
const LINES = 2_000;
/** ~4 s of output in 20 bursts, so a failure lands mid-stream. */
const STREAM = `i=0; while [ $i -lt ${LINES} ]; do i=$((i+1)); echo "line-$i"; if [ $((i % 100)) -eq 0 ]; then sleep 0.2; fi; done`;
const EXPECTED = Array.from({ length: LINES }, (_, i) => `line-${i + 1}\n`).join('');

let redis: TestRedis;
let front: Front;
const nodes: ClusterNode[] = [];
const executors: ClusterProcess[] = [];
const clients: LazyRemoteExecServerClient[] = [];
const harnessKey = NoiseChannelIdentity.generate().toJSON();

beforeAll(async () => {
  assertBuilt();
  redis = await startTestRedis();
  front = await startFront(() => nodes.map((node) => node.port));
  for (let i = 0; i < 3; i++) nodes.push(await startNode(redis.url, front.url));
  executors.push(await startTsRemote(front.url, ENVIRONMENTS[0]));
  executors.push(await startCodexClusterRemote(front.url, ENVIRONMENTS[1]));
  for (const environmentId of ENVIRONMENTS) {
    await waitAttached(front.url, environmentId, harnessKey);
  }
}, 90_000);

afterAll(async () => {
  for (const client of clients) client.close();
  for (const executor of executors) await executor.kill();
  for (const node of nodes) await node.kill();
  await front?.close();
  await redis?.stop();
});

/** The node whose URL `/connect` (asked through the front) names for the environment. */
async function holderOf(environmentId: string): Promise<ClusterNode> {
  // Until the executor has registered again, /connect may still name a node just killed.
  for (let attempt = 0; attempt < 200; attempt++) {
    const url = await waitAttached(front.url, environmentId, harnessKey);
    const port = Number(new URL(url).port);
    const node = nodes.find((candidate) => candidate.port === port);
    if (node) return node;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`${environmentId}: /connect keeps naming a node that is gone`);
}

/** A recovering client of `environmentId` that looks the executor up through the front. */
function lazyClient(environmentId: string): LazyRemoteExecServerClient {
  const registry = new EnvironmentRegistryClient({
    baseUrl: front.url,
    bearerToken: CLUSTER_HARNESS_TOKEN,
  });
  const client = new LazyRemoteExecServerClient(
    noiseRendezvous(
      new RegistryConnectProvider(registry, environmentId),
      NoiseChannelIdentity.generate(),
    ),
  );
  clients.push(client);
  return client;
}

/**
 * Starts the stream on both executors, waits until each has printed something, runs
 * `disrupt`, and checks every byte arrived, once and in order.
 */
async function streamThrough(disrupt: () => Promise<void>): Promise<SessionState[][]> {
  const states: SessionState[][] = [];
  const sessions: ExecServerClient[] = [];
  const runs = await Promise.all(
    ENVIRONMENTS.map(async (environmentId, index) => {
      const session = await firstValueFrom(lazyClient(environmentId).get().pipe(timeout(20_000)));
      const seenStates: SessionState[] = [];
      states[index] = seenStates;
      session.state$.subscribe((state) => seenStates.push(state));
      sessions[index] = session;
      const handle = await firstValueFrom(
        session
          .startProcess({
            argv: ['sh', '-c', STREAM],
            cwd: tmpdir(),
            env: { PATH: '/usr/bin:/bin' },
          })
          .pipe(timeout(20_000)),
      );
      // Disrupt once a quarter of the output is through.
      let seen = '';
      const started = new Promise<void>((resolve) => {
        handle.stdout$.subscribe({
          next: (chunk) => {
            seen += Buffer.from(chunk).toString();
            if (seen.includes('line-500\n')) resolve();
          },
          error: () => resolve(),
          complete: () => resolve(),
        });
      });
      const output = lastValueFrom(handle.stdout$.pipe(toArray(), timeout(45_000))).then((all) =>
        Buffer.concat(all).toString(),
      );
      await started;
      return output;
    }),
  );
  const began = Date.now();
  await disrupt();
  const outputs = await Promise.all(runs);
  // The recovery deadline of LazyRemoteExecServerClient is 25 s; the stream itself takes ~4 s.
  expect(Date.now() - began).toBeLessThan(30_000);
  for (const output of outputs) {
    expect(output.length).toBe(EXPECTED.length);
    expect(output === EXPECTED).toBe(true);
  }
  // No session failed; each is connected again (its state may follow the last output).
  for (const session of sessions) {
    await firstValueFrom(
      session.state$.pipe(
        filter((state) => state === 'connected' || state === 'failed'),
        timeout(25_000),
      ),
    );
  }
  const ended = states.map((seen) => [...seen]);
  for (const client of clients.splice(0)) client.close();
  for (const seen of ended) {
    expect(seen).not.toContain('failed');
    expect(seen.at(-1)).toBe('connected');
  }
  return ended;
}

describe('rendezvous cluster (Redis, 3 nodes, both executors)', () => {
  it('serves clients through every node, for both executors', async () => {
    for (const node of nodes) {
      const registry = new EnvironmentRegistryClient({
        baseUrl: node.url,
        bearerToken: CLUSTER_HARNESS_TOKEN,
      });
      for (const environmentId of ENVIRONMENTS) {
        const identity = NoiseChannelIdentity.generate();
        const client = await firstValueFrom(
          registry.connect(environmentId, identity.toJSON()).pipe(
            switchMap((bundle) => connectNoiseHarness(bundle, identity)),
            switchMap((transport) =>
              ExecServerClient.connect(transport, { clientName: 'cluster' }),
            ),
            timeout(20_000),
          ),
        );
        try {
          const handle = await firstValueFrom(
            client.startProcess({
              argv: ['sh', '-c', `printf '%s via %s' ${environmentId} ${node.port}`],
              cwd: tmpdir(),
              env: { PATH: '/usr/bin:/bin' },
            }),
          );
          const out = await lastValueFrom(handle.stdout$.pipe(toArray(), timeout(10_000)));
          expect(Buffer.concat(out).toString()).toBe(`${environmentId} via ${node.port}`);
        } finally {
          client.close();
        }
      }
    }
  }, 60_000);

  /** The nodes holding the executors (one or two): every executor kind meets the failure. */
  const holders = async (): Promise<ClusterNode[]> => [
    ...new Set(await Promise.all(ENVIRONMENTS.map(holderOf))),
  ];

  it('kill -9 of the nodes holding the executors mid-stream: they register elsewhere, sessions recover byte-exact', async () => {
    const victims = await holders();
    const states = await streamThrough(async () => {
      for (const victim of victims) {
        await victim.kill();
        nodes.splice(nodes.indexOf(victim), 1);
        nodes.push(await startNode(redis.url, front.url));
      }
    });
    for (const seen of states) expect(seen).toContain('recovering');
    for (const environmentId of ENVIRONMENTS) {
      expect(victims).not.toContain(await holderOf(environmentId));
    }
  }, 90_000);

  it('SIGTERM drains the nodes holding the executors mid-stream: they exit 0, executors move, sessions recover byte-exact', async () => {
    const leaving = await holders();
    const states = await streamThrough(async () => {
      for (const node of leaving) {
        node.child.kill('SIGTERM');
        nodes.splice(nodes.indexOf(node), 1);
        nodes.push(await startNode(redis.url, front.url));
      }
      for (const node of leaving) expect(await node.exited).toMatchObject({ code: 0 });
    });
    for (const node of leaving) expect(node.stderr()).toContain('rendezvous: draining');
    for (const seen of states) expect(seen).toContain('recovering');
    for (const environmentId of ENVIRONMENTS) {
      expect(leaving).not.toContain(await holderOf(environmentId));
    }
  }, 90_000);

  it('Redis restarted mid-stream: the holding nodes put registrations back, streams go on byte-exact', async () => {
    const holders = await Promise.all(ENVIRONMENTS.map(holderOf));
    await streamThrough(async () => {
      await redis.restart();
    });
    for (const [index, environmentId] of ENVIRONMENTS.entries()) {
      expect((await holderOf(environmentId)).port).toBe(holders[index]!.port);
      expect(holders[index]!.stderr()).toContain(`${environmentId} registration restored`);
    }
  }, 90_000);

  it('Redis restarted while a node died: its executors register again on the others', async () => {
    const victim = await holderOf(ENVIRONMENTS[0]);
    await victim.kill();
    nodes.splice(nodes.indexOf(victim), 1);
    await redis.restart();
    for (const environmentId of ENVIRONMENTS) {
      expect((await holderOf(environmentId)).port).not.toBe(victim.port);
    }
    await streamThrough(async () => undefined);
  }, 90_000);
});
