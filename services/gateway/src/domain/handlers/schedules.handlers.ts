import { AppError } from '@quarry/errors';
import type { ScheduleOwner, Schedules } from '../../ports/schedules.port';
import type { Principal } from '../principal';
import type { MethodHandlers } from './method-handler';

function ownerOf(p: Principal): ScheduleOwner {
  return { userId: p.user.id, userName: p.user.name, tokenHash: p.tokenHash };
}

type SchedulesMethods = 'REPORTS.SCHEDULE' | 'REPORTS.SCHEDULES' | 'REPORTS.UNSCHEDULE';

/**
 * Scheduled deliveries, through the scheduler module once it runs (it starts after the gateway's use
 * cases, which its deliveries run reports through); without it each of these answers 503.
 */
export function schedulesHandlers(deps: {
  schedules: () => Schedules | undefined;
}): Pick<MethodHandlers, SchedulesMethods> {
  const scheduler = (): Schedules => {
    const schedules = deps.schedules();
    if (!schedules)
      throw AppError.unavailable('Scheduled deliveries are not available: this gateway runs without Redis (REDIS_URL)');
    return schedules;
  };
  const checkAvailable = () => void scheduler();
  return {
    'REPORTS.SCHEDULE': {
      checkAvailable,
      handle: async ({ principal, complete }) => ({ data: await scheduler().schedule(ownerOf(principal), complete) }),
    },
    'REPORTS.SCHEDULES': {
      checkAvailable,
      handle: async ({ principal, complete }) => ({ data: await scheduler().list(ownerOf(principal), complete.guid) }),
    },
    'REPORTS.UNSCHEDULE': {
      checkAvailable,
      handle: async ({ principal, complete }) => ({
        data: await scheduler().unschedule(ownerOf(principal), complete.scheduleId),
      }),
    },
  };
}
