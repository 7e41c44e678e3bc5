import { createHash, timingSafeEqual } from 'node:crypto';

/** HTTP Basic credentials of the `Authorization` header, or undefined when absent or malformed. */
export function parseBasicAuth(
  header: string | undefined,
): { username: string; password: string } | undefined {
  const match = /^Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(header ?? '');
  if (!match) return undefined;
  const decoded = Buffer.from(match[1], 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) return undefined;
  return { username: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
}

/** Constant-time comparison, on digests so that the length does not leak either. */
function sameSecret(a: string, b: string): boolean {
  const digest = (s: string) => createHash('sha256').update(s).digest();
  return timingSafeEqual(digest(a), digest(b));
}

export function isAuthorized(
  header: string | undefined,
  expected: { apiUsername: string; apiPassword: string },
): boolean {
  const credentials = parseBasicAuth(header);
  if (!credentials) return false;
  // Both compared, always, so the time does not tell which one was wrong.
  const userOk = sameSecret(credentials.username, expected.apiUsername);
  const passwordOk = sameSecret(credentials.password, expected.apiPassword);
  return userOk && passwordOk;
}

/** The account whose API credentials the header carries, or undefined. Every account is tried. */
export function authenticate<A extends { apiUsername: string; apiPassword: string }>(
  header: string | undefined,
  accounts: readonly A[],
): A | undefined {
  const matches = accounts.map((account) => isAuthorized(header, account));
  return accounts[matches.indexOf(true)];
}
