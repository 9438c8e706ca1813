import { Observable, type Subscriber } from 'rxjs';

/**
 * The hot source behind the executor's accepted socket's `incoming$`
 * (src/server/acceptedWebSocket.ts): like a `Subject`, but `next` hands the value straight to
 * each subscriber, and a subscriber that arrives after the end gets the end. It behaves as a
 * `Subject` for every subscriber a transport has (spec/transport/directSubject.spec.ts); why it
 * is not one, and why the client's WebSocket transport uses a `Subject` again, is in
 * docs/performance.md ("Fast paths").
 */
export class DirectSubject<T> {
  /**
   * Replaced, never changed in place, so a delivery in progress is not disturbed. An array:
   * an index loop over it is cheaper, cold, than iterating a Set.
   */
  private subscribers: readonly Subscriber<T>[] = [];
  private ending: { readonly error?: unknown } | undefined;

  readonly observable = new Observable<T>((subscriber) => {
    if (this.ending) {
      if ('error' in this.ending) subscriber.error(this.ending.error);
      else subscriber.complete();
      return undefined;
    }
    this.subscribers = [...this.subscribers, subscriber];
    return () => {
      this.subscribers = this.subscribers.filter((other) => other !== subscriber);
    };
  });

  get ended(): boolean {
    return this.ending !== undefined;
  }

  next(value: T): void {
    if (this.ending) return;
    const subscribers = this.subscribers;
    for (let index = 0; index < subscribers.length; index += 1)
      (subscribers[index] as Subscriber<T>).next(value);
  }

  complete(): void {
    this.finish({});
  }

  error(error: unknown): void {
    this.finish({ error });
  }

  private finish(ending: { readonly error?: unknown }): void {
    if (this.ending) return;
    this.ending = ending;
    const subscribers = this.subscribers;
    this.subscribers = [];
    for (const subscriber of subscribers) {
      if ('error' in ending) subscriber.error(ending.error);
      else subscriber.complete();
    }
  }
}
