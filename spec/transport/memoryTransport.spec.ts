/** The in-memory transport pair behind the local environment. */
import { describe, expect, it } from '@jest/globals';
import { lastValueFrom, toArray } from 'rxjs';
import { createMemoryTransportPair } from '../../src/transport/memoryTransport.js';

describe('createMemoryTransportPair', () => {
  it('delivers in order, never inside send, and completes both ends after what was sent', async () => {
    const [a, b] = createMemoryTransportPair();
    const atB = lastValueFrom(b.incoming$.pipe(toArray()));
    const atA = lastValueFrom(a.incoming$.pipe(toArray()));
    const seenByB: string[] = [];
    b.incoming$.subscribe((message) => {
      seenByB.push(message);
      if (message === 'ping') b.send('pong');
    });
    a.send('one');
    a.send('ping');
    expect(seenByB).toEqual([]);
    a.send('three');
    a.close();
    a.send('after close');
    expect(await atB).toEqual(['one', 'ping', 'three']);
    // b answered `ping` after a closed: the pair is closed, so nothing more arrives.
    expect(await atA).toEqual([]);
  });

  it('carries a reply sent before the close', async () => {
    const [a, b] = createMemoryTransportPair();
    const atA = lastValueFrom(a.incoming$.pipe(toArray()));
    b.incoming$.subscribe((message) => b.send(`re: ${message}`));
    a.send('hello');
    await new Promise((resolve) => setTimeout(resolve, 0));
    b.close();
    expect(await atA).toEqual(['re: hello']);
  });
});
