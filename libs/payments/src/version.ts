/** Version of this library, sent in the `User-Agent` header. Kept equal to `libs/payments/package.json` by a spec. */
export const LIBRARY_VERSION = '0.5.0-next.0';
export const LIBRARY_NAME = '@malipo/nestjs';
