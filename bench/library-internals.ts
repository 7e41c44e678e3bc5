/**
 * Every library internal the benchmark reaches into, in one place: the library changes in
 * parallel (issue 14: `prepareRequest` may give way to a precompiled validator), so following a
 * rename or a replacement is one edit here. Client (a) itself uses only the public API.
 */
export {
  createPaymentsHttpService,
  armDeadline,
  DeadlineTransport,
  HttpPaymentsWire,
} from '../libs/payments/src/http-payments-wire';
export { OperationRunner } from '../libs/payments/src/operation-runner';
export { OPERATIONS } from '../libs/payments/src/operations';
export type { PaymentsOperation } from '../libs/payments/src/operations';
export type { PaymentsDefaults } from '../libs/payments/src/payments-options.interface';
export { resolvePaymentsOptions, toDefaults } from '../libs/payments/src/payments-options';
/** Validation of a caller's request: what runs before encoding on every call. */
export { prepareRequest } from '../libs/payments/src/request-rules';
export { basicAuthorization } from '../libs/payments/src/secret-redactor';
export { LIBRARY_NAME, LIBRARY_VERSION } from '../libs/payments/src/version';
export { encodeRequest } from '../libs/payments/src/wire';
export { OPERATION_CASES } from '../libs/payments/spec-support/operation-cases';
