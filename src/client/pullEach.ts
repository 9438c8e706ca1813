import { type Observable, EMPTY, concat, defer, finalize, from, switchMap } from 'rxjs';

/**
 * Pulls `source` one value at a time, running `each` on a value before asking for the next;
 * stopping early (error, unsubscribe) returns the iterator.
 */
export function pullEach<T>(
  source: AsyncIterable<T>,
  each: (value: T) => Observable<never>,
): Observable<never> {
  return defer(() => {
    const iterator = source[Symbol.asyncIterator]();
    let done = false;
    const next = (): Observable<never> =>
      from(iterator.next()).pipe(
        switchMap((result) => {
          if (result.done) {
            done = true;
            return EMPTY;
          }
          return concat(each(result.value), defer(next));
        }),
      );
    return next().pipe(
      finalize(() => {
        if (!done) void iterator.return?.()?.catch(() => undefined);
      }),
    );
  });
}
