/**
 * A value that goes into a URL path (a reference, a username): printable ASCII without `/`,
 * `\\`, `?`, `#` or `..`, so it cannot reach another endpoint. A rule of `REQUEST_RULES`, kept
 * apart so that decoding an answer (wire.ts) can ask it of a reference without the request rules.
 */
export const PATH_SEGMENT = {
  pattern: /^(?!\.$)(?!.*\.\.)[\x21-\x7e]{1,128}$/,
  forbidden: /[/\\?#]/,
  description: '1 to 128 printable characters, not ".", without "/", "\\", "?", "#" or ".."',
} as const;

/** Whether `value` can be sent as one URL path segment ({@link PATH_SEGMENT}). */
export function isPathSegment(value: unknown): value is string {
  return (
    typeof value === 'string' &&
    PATH_SEGMENT.pattern.test(value) &&
    !PATH_SEGMENT.forbidden.test(value)
  );
}
