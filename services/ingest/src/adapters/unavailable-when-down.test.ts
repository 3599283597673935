import { AppError } from '@quarry/errors';
import { unavailableWhenDown } from './unavailable-when-down';

describe('unavailableWhenDown', () => {
  const failing = (err: unknown) =>
    unavailableWhenDown({ get: async () => Promise.reject(err), size: () => 3 }, 'The sources store (Redis)');

  it('answers UNAVAILABLE where the connection failed', async () => {
    const lost = [
      Object.assign(new Error('Reached the max retries per request limit'), { name: 'MaxRetriesPerRequestError' }),
      Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:6379'), { code: 'ECONNREFUSED' }),
      new Error('Connection is closed.'),
      new Error('LOADING Redis is loading the dataset in memory'),
    ];
    for (const err of lost)
      await expect(failing(err).get()).rejects.toMatchObject({
        code: 'UNAVAILABLE',
        detail: 'The sources store (Redis) is not answering right now; try again shortly',
      });
  });

  it('lets an AppError and any other fault pass as they are, and leaves other methods alone', async () => {
    const refusal = AppError.notFound('Source "x" not found');
    await expect(failing(refusal).get()).rejects.toBe(refusal);
    const bug = new SyntaxError('Unexpected token } in JSON');
    await expect(failing(bug).get()).rejects.toBe(bug);
    expect(failing(bug).size()).toBe(3);
  });
});
