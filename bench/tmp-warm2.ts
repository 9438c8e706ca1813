import { firstValueFrom, switchMap } from 'rxjs';
import { ExecServerClient } from '../src/client/index.js';
import { NoiseChannelIdentity } from '../src/noise/index.js';
import { EnvironmentRegistryClient } from '../src/registry/index.js';
import { connectNoiseHarness } from '../src/transport/noiseHarnessTransport.js';
import { connectWebSocket } from '../src/transport/webSocketTransport.js';
const [url, reg] = process.argv.slice(2) as [string, string];
const plain = () => firstValueFrom(connectWebSocket(url).pipe(switchMap((t) => ExecServerClient.connect(t, { clientName: 'b' }))));
const noise = () => { const id = NoiseChannelIdentity.generate(); const r = new EnvironmentRegistryClient({ baseUrl: reg, bearerToken: 'h1' });
  return firstValueFrom(r.connect('e1', id.toJSON()).pipe(switchMap((b) => connectNoiseHarness(b, id)), switchMap((t) => ExecServerClient.connect(t, { clientName: 'b' })))); };
const run = async (c: ExecServerClient) => { const s = performance.now(); const h = await firstValueFrom(c.startProcess({ argv: ['/usr/bin/true'], cwd: '/', env: { PATH: '/usr/bin' } })); await new Promise<void>((res, rej) => h.stdout$.subscribe({ complete: res, error: rej })); return performance.now() - s; };
for (let k = 0; k < 4; k++) for (const [name, mk] of [['plain', plain], ['noise', noise]] as const) {
  const t0 = performance.now(); const c = await mk(); const t1 = performance.now(); const ts: number[] = [];
  for (let i = 0; i < 6; i++) ts.push(await run(c));
  console.log(name, 'connect', (t1 - t0).toFixed(1), 'true', ts.map((x) => x.toFixed(1)).join(' ')); c.close();
}
