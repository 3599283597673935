import { AppError } from '@quarry/errors';
import type { MethodName } from '@quarry/contract';
import type { Schedules } from '../ports/schedules.port';
import type { ServiceClients } from '../ports/service-clients.port';
import { DispatchMethodUseCase } from './dispatch-method.use-case';
import type { MethodCall, MethodHandlers } from './handlers/method-handler';
import { checkEveryMethodHandled, createMethodHandlers } from './handlers/method-handlers';
import { principalWith } from '../../test-support/principal';

/** Every handler records the call it got; nothing reaches a service. */
function recordingHandlers(): { handlers: MethodHandlers; calls: Array<MethodCall<MethodName>> } {
  const calls: Array<MethodCall<MethodName>> = [];
  const real = createMethodHandlers({ services: {} as ServiceClients });
  const handlers = Object.fromEntries(
    Object.keys(real).map((m) => [
      m,
      {
        handle: async (call: MethodCall<MethodName>) => {
          calls.push(call);
          return { data: { ran: m } };
        },
      },
    ]),
  ) as unknown as MethodHandlers;
  return { handlers, calls };
}

const refusal = (p: Promise<unknown>) =>
  p.then(
    () => undefined,
    (e: unknown) => e as AppError,
  );

describe('the dispatch pipeline', () => {
  it('hands the handler the params as sent and as completed with the contract defaults', async () => {
    const { handlers, calls } = recordingHandlers();
    const out = await new DispatchMethodUseCase(handlers).call(
      principalWith(['indexes:read']),
      'INDEXES.FIND',
      { searchText: 'mov' },
      { requestId: 'r' },
    );
    expect(out).toEqual({ data: { ran: 'INDEXES.FIND' } });
    expect(calls[0].sent).toEqual({ searchText: 'mov' });
    expect(calls[0].complete).toMatchObject({ searchText: 'mov', limit: expect.any(Number) });
    expect(calls[0].caller).toMatchObject({ userId: 'u1', userName: 'ana', scopes: ['indexes:read'] });
  });

  it('checks the scope before the params: a token without it learns nothing about them', async () => {
    const { handlers, calls } = recordingHandlers();
    const err = await refusal(
      new DispatchMethodUseCase(handlers).call(
        principalWith(['indexes:read']),
        'QUERIES.EXECUTE',
        { nope: 1 },
        {
          requestId: 'r',
        },
      ),
    );
    expect(err).toMatchObject({ code: 'FORBIDDEN', message: 'Token lacks the required scope "query:execute"' });
    expect(calls).toEqual([]);
  });

  it('needs reports:write to save, and the second scope the contract names', async () => {
    const { handlers } = recordingHandlers();
    const use = new DispatchMethodUseCase(handlers);
    const save = await refusal(
      use.call(
        principalWith(['query:execute']),
        'QUERIES.EXECUTE',
        { index: 'm', saveReport: { name: 'x' } },
        {
          requestId: 'r',
        },
      ),
    );
    expect(save).toMatchObject({ message: 'Token lacks the required scope "reports:write"' });
    const run = await refusal(
      use.call(principalWith(['reports:read']), 'REPORTS.EXECUTE', { guid: 'g' }, { requestId: 'r' }),
    );
    expect(run).toMatchObject({ message: 'Token lacks the required scope "query:execute"' });
  });

  it('refuses what an embed token was not issued for before the scopes', async () => {
    const { handlers } = recordingHandlers();
    const embed = principalWith([], { id: 'e1', index: 'movies' });
    const err = await refusal(
      new DispatchMethodUseCase(handlers).call(embed, 'QUERIES.EXECUTE', { index: 'other' }, { requestId: 'r' }),
    );
    expect(err).toMatchObject({ code: 'FORBIDDEN', message: 'This embed token may only read index "movies"' });
  });

  it('names every bad param before any handler runs', async () => {
    const { handlers, calls } = recordingHandlers();
    const err = await refusal(
      new DispatchMethodUseCase(handlers).call(
        principalWith(['query:execute']),
        'QUERIES.EXECUTE',
        { page: 'x' },
        {
          requestId: 'r',
        },
      ),
    );
    expect(err).toMatchObject({ code: 'INVALID_ARGUMENT' });
    expect(err!.message).toMatch(/index/);
    expect(calls).toEqual([]);
  });

  it('says a method is unavailable on this gateway before reading its params', async () => {
    const use = new DispatchMethodUseCase(createMethodHandlers({ services: {} as ServiceClients }));
    const err = await refusal(
      use.call(principalWith(['reports:write']), 'REPORTS.SCHEDULE', { bad: true }, { requestId: 'r' }),
    );
    expect(err).toMatchObject({ code: 'UNAVAILABLE' });
    expect(err!.message).toMatch(/^Scheduled deliveries are not available/);
  });

  it('reaches the scheduler once it is attached, with the completed params', async () => {
    let got: unknown;
    const schedules = {
      list: async (_owner: unknown, guid: string | undefined) => {
        got = guid;
        return { schedules: [] };
      },
    } as unknown as Schedules;
    const use = new DispatchMethodUseCase(
      createMethodHandlers({ services: {} as ServiceClients, schedules: () => schedules }),
    );
    const out = await use.call(
      principalWith(['reports:read']),
      'REPORTS.SCHEDULES',
      { guid: 'g1' },
      { requestId: 'r' },
    );
    expect(out).toEqual({ data: { schedules: [] } });
    expect(got).toBe('g1');
  });
});

describe('the handler registry', () => {
  it('has exactly one handler for every method of the contract', () => {
    expect(() => checkEveryMethodHandled(createMethodHandlers({ services: {} as ServiceClients }))).not.toThrow();
  });

  it('refuses to start without a handler for a method, naming it', () => {
    const { handlers } = recordingHandlers();
    const { 'TOKENS.EMBED': _gone, ...rest } = handlers;
    expect(() => new DispatchMethodUseCase(rest as MethodHandlers)).toThrow(
      "No handler for the contract's method TOKENS.EMBED",
    );
  });

  it('refuses a handler for a method the contract does not have', () => {
    const { handlers } = recordingHandlers();
    expect(() =>
      checkEveryMethodHandled({ ...handlers, 'QUERIES.EXPLAIN': { handle: async () => ({ data: 1 }) } }),
    ).toThrow('Handlers for methods the contract does not have: QUERIES.EXPLAIN');
  });
});
