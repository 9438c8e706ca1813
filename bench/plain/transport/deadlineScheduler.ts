/** Plain twin of src/transport/deadlineScheduler.ts (bench/support/plainTwins.ts): `asyncScheduler`. */
import { asyncScheduler, type SchedulerLike } from 'rxjs';

export const deadlineScheduler: SchedulerLike = asyncScheduler;
