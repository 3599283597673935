import type { MethodName } from '@quarry/contract';
import type { RequestTrace } from '../ports/service-clients.port';
import { checkEveryMethodHandled } from './handlers/method-handlers';
import type { MethodHandler, MethodHandlers, MethodResult } from './handlers/method-handler';
import { checkEmbedGrant, checkScopes } from './method-access';
import { readParams } from './method-params';
import { callerOf, type Principal } from './principal';

/**
 * One JSON-RPC method call through the contract's pipeline: the embed grant, the scopes the contract
 * names, the method's schema, its defaults, and then the method's one handler. Nothing reaches a
 * service before every param rule of the contract has passed.
 */
export class DispatchMethodUseCase {
  constructor(private readonly handlers: MethodHandlers) {
    checkEveryMethodHandled(handlers);
  }

  async call<M extends MethodName>(
    principal: Principal,
    method: M,
    params: Record<string, unknown>,
    trace: RequestTrace,
  ): Promise<MethodResult> {
    checkEmbedGrant(principal, method, params);
    checkScopes(principal, method, params);
    const handler = this.handlers[method] as MethodHandler<M>;
    handler.checkAvailable?.();
    const { sent, complete } = readParams(method, params);
    return handler.handle({ principal, caller: callerOf(principal), sent, complete, trace });
  }
}
