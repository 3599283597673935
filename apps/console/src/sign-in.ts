/*
 * Sign-in with the deployment's OpenID provider: the authorization code flow with PKCE for a public
 * client (RFC 7636, RFC 8707's resource for the API's audience). The gateway says whether there is one
 * (sign-in.json, absent otherwise); the code verifier and state live in this tab's sessionStorage only,
 * from the redirect to the provider until its answer comes back.
 */

export interface SignInConfig {
  issuer: string;
  clientId: string;
  resource: string;
}

const PENDING_KEY = 'quarry.console.sign-in';
/** What the console asks for: the scopes a person uses here; the provider grants what it decides. */
const SCOPE = 'openid query:execute indexes:read reports:read reports:write embed:create tokens:write';

/** The provider the gateway names, or undefined (no sign-in: the pasted token only). */
export async function signInConfig(): Promise<SignInConfig | undefined> {
  try {
    const res = await fetch('/console/sign-in.json', { cache: 'no-store' });
    if (!res.ok) return undefined;
    const cfg = (await res.json()) as Partial<SignInConfig>;
    return typeof cfg.issuer === 'string' && typeof cfg.clientId === 'string' && typeof cfg.resource === 'string'
      ? (cfg as SignInConfig)
      : undefined;
  } catch {
    return undefined;
  }
}

const base64url = (bytes: Uint8Array) =>
  btoa(String.fromCharCode(...bytes))
    .replace(/\+/g, '-')
    .replace(/\//g, '_')
    .replace(/=+$/, '');
const random = () => base64url(crypto.getRandomValues(new Uint8Array(32)));
const redirectUri = () => `${location.origin}/console/`;

async function endpoints(issuer: string): Promise<{ authorization: string; token: string }> {
  const res = await fetch(`${issuer.replace(/\/$/, '')}/.well-known/openid-configuration`);
  if (!res.ok) throw new Error(`the provider's discovery document answered HTTP ${res.status}`);
  const doc = (await res.json()) as { authorization_endpoint?: unknown; token_endpoint?: unknown };
  if (typeof doc.authorization_endpoint !== 'string' || typeof doc.token_endpoint !== 'string')
    throw new Error("the provider's discovery document names no authorization or token endpoint");
  return { authorization: doc.authorization_endpoint, token: doc.token_endpoint };
}

/** Goes to the provider's sign-in page; it sends the browser back to /console/ with a code. */
export async function beginSignIn(cfg: SignInConfig): Promise<void> {
  const { authorization } = await endpoints(cfg.issuer);
  const verifier = random();
  const state = random();
  const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(verifier)));
  sessionStorage.setItem(PENDING_KEY, JSON.stringify({ verifier, state }));
  const url = new URL(authorization);
  url.search = new URLSearchParams({
    response_type: 'code',
    client_id: cfg.clientId,
    redirect_uri: redirectUri(),
    scope: SCOPE,
    state,
    code_challenge: base64url(digest),
    code_challenge_method: 'S256',
    resource: cfg.resource,
  }).toString();
  location.assign(url.toString());
}

/**
 * On the way back from the provider: the access token for the code in the address, or undefined when the
 * address holds none. Throws saying why when the provider refused, or the state is not the one sent.
 */
export async function finishSignIn(cfg: SignInConfig): Promise<string | undefined> {
  const params = new URLSearchParams(location.search);
  const code = params.get('code');
  const error = params.get('error');
  if (!code && !error) return undefined;
  // The code is single-use: it leaves the address (and the history) at once.
  history.replaceState(null, '', location.pathname);
  const pending = JSON.parse(sessionStorage.getItem(PENDING_KEY) ?? 'null') as {
    verifier: string;
    state: string;
  } | null;
  sessionStorage.removeItem(PENDING_KEY);
  if (error) throw new Error(`the provider refused the sign-in: ${params.get('error_description') ?? error}`);
  if (!pending || params.get('state') !== pending.state)
    throw new Error('this sign-in was not started from this tab (its state does not match); sign in again');
  const { token } = await endpoints(cfg.issuer);
  const res = await fetch(token, {
    method: 'POST',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'authorization_code',
      code: code!,
      redirect_uri: redirectUri(),
      client_id: cfg.clientId,
      code_verifier: pending.verifier,
      resource: cfg.resource,
    }),
  });
  const body = (await res.json().catch(() => ({}))) as {
    access_token?: string;
    error_description?: string;
    error?: string;
  };
  if (!res.ok || typeof body.access_token !== 'string')
    throw new Error(`the provider gave no token: ${body.error_description ?? body.error ?? `HTTP ${res.status}`}`);
  return body.access_token;
}
