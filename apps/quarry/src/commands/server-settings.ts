/**
 * The running server a command talks to over its API, as `npm start` prints it: QUARRY_URL and
 * QUARRY_TOKEN, checked before anything is sent (a clear error naming the variable, not a failed fetch).
 * `quarry mcp` and `quarry source …` read them here, the same way.
 */
export interface ServerSettings {
  /** The server's address as given (http or https). */
  url: URL;
  token: string;
}

export function serverSettings(env: Record<string, string | undefined>): ServerSettings {
  const problems: string[] = [];
  let url: URL | undefined;
  try {
    url = new URL(env.QUARRY_URL ?? '');
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error('not http');
  } catch {
    problems.push('QUARRY_URL must be the server (http://host:port), as npm start prints it');
  }
  const token = env.QUARRY_TOKEN?.trim() ?? '';
  if (!token) problems.push('QUARRY_TOKEN must be an API token (quarry token create)');
  if (problems.length || !url) throw new Error(problems.join('; '));
  return { url, token };
}
