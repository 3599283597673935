import { AppError, quoteInput } from '@quarry/errors';

/**
 * A word of the contract as it came over gRPC, in the contract's spelling. The gateway sends complete,
 * checked values, so a miss here is a peer out of step (a rolling update, a hand-written client): it
 * gets a 400 naming the param, never a crash deeper in the service.
 */
export function wireWord<T extends string>(words: readonly T[], sent: string, param: string): T {
  const found = words.find((w) => w.toLowerCase() === sent.trim().toLowerCase());
  if (!found) throw AppError.invalid(`${param} ${quoteInput(sent)} is not one of ${words.join(', ')}`);
  return found;
}
