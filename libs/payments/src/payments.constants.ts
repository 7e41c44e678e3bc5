/**
 * Production base URL of the Payments Service. The interface document does not give it, so this
 * is a placeholder on the reserved `.example` domain that never resolves: set `baseUrl`.
 */
export const DEFAULT_BASE_URL = 'https://api.payments-service.example';

/** Logger context of every line this library writes. */
export const PAYMENTS_LOGGER_CONTEXT = 'MalipoPayments';

/** Token of the validated options with defaults applied (internal). */
export const PAYMENTS_RESOLVED_OPTIONS = Symbol('PAYMENTS_RESOLVED_OPTIONS');

/** Token of the module's private `HttpService`, whose axios instance carries the retry interceptors (internal). */
export const PAYMENTS_HTTP_SERVICE = Symbol('PAYMENTS_HTTP_SERVICE');
