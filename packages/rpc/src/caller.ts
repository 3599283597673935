import { isScope, type Caller } from '@quarry/contract';
import type * as pb from './generated/index';

/** The caller a request carries, as the services use it. None (a malformed call) may read nothing. */
export function callerFromWire(caller: pb.Caller__Output | null): Caller {
  return {
    userId: caller?.userId ?? '',
    userName: caller?.userName ?? '',
    admin: caller?.admin ?? false,
    indexes: caller?.indexes ?? [],
    realms: caller?.realms ?? [],
    scopes: (caller?.scopes ?? []).filter(isScope),
    narrowing: caller?.narrowing ?? [],
  };
}

/** The caller as it travels from the gateway to a service. */
export function callerToWire(caller: Caller): pb.Caller {
  return {
    userId: caller.userId,
    userName: caller.userName,
    admin: caller.admin,
    indexes: [...caller.indexes],
    realms: [...caller.realms],
    scopes: [...caller.scopes],
    narrowing: [...(caller.narrowing ?? [])],
  };
}
