export { applyPaymentsSwagger } from './payments-swagger';
export type { PaymentsSwaggerOptions } from './payments-swagger';
