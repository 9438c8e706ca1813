/** Plain twin of src/transport/directSubject.ts (bench/support/plainTwins.ts): an RxJS `Subject`. */
import { Subject } from 'rxjs';

export class DirectSubject<T> {
  private readonly subject = new Subject<T>();
  private finished = false;
  readonly observable = this.subject.asObservable();

  get ended(): boolean {
    return this.finished;
  }

  next(value: T): void {
    this.subject.next(value);
  }

  complete(): void {
    this.finished = true;
    this.subject.complete();
  }

  error(error: unknown): void {
    this.finished = true;
    this.subject.error(error);
  }
}
