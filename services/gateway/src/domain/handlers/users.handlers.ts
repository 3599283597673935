import { AppError } from '@quarry/errors';
import type { ManageUsersUseCase } from '../manage-users.use-case';
import type { MethodHandler, MethodHandlers } from './method-handler';

type UserMethod = 'USERS.CREATE' | 'USERS.UPDATE' | 'USERS.FIND' | 'USERS.DISABLE' | 'USERS.ENABLE' | 'USERS.DELETE';

/** USERS.*: the admin API, on the gateway's own metadata store (absent in unit tests: 503). */
export function usersHandlers(deps: { users?: ManageUsersUseCase }): Pick<MethodHandlers, UserMethod> {
  const checkAvailable = () => {
    if (!deps.users) throw AppError.unavailable('The admin API is not available on this gateway (no metadata store)');
  };
  const on = <M extends UserMethod>(run: MethodHandler<M>['handle']): MethodHandler<M> => ({
    checkAvailable,
    handle: (call) => {
      checkAvailable();
      return run(call);
    },
  });
  return {
    'USERS.CREATE': on(async ({ principal, complete }) => ({ data: await deps.users!.create(principal, complete) })),
    'USERS.UPDATE': on(async ({ principal, sent }) => ({ data: await deps.users!.update(principal, sent) })),
    'USERS.FIND': on(async ({ principal, sent }) => {
      const data = await deps.users!.find(principal, sent.name);
      return { data, returned: data.users.length };
    }),
    'USERS.DISABLE': on(async ({ principal, sent }) => ({
      data: await deps.users!.setStatus(principal, sent.name, 'disabled'),
    })),
    'USERS.ENABLE': on(async ({ principal, sent }) => ({
      data: await deps.users!.setStatus(principal, sent.name, 'active'),
    })),
    'USERS.DELETE': on(async ({ principal, sent }) => ({ data: await deps.users!.delete(principal, sent.name) })),
  };
}
