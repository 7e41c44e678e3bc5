import 'reflect-metadata';
/**
 * `@malipo/sandbox`: an offline emulator of the Payments Service for your e2e tests.
 * `startSandbox()` starts it in-process; `createSandboxControl(url)` controls one started apart
 * (`npx malipo-sandbox`).
 */
export { startSandbox } from './sandbox';
export type { RunningSandbox, SandboxOptions } from './sandbox';
export { createSandboxControl, SandboxControlError } from './sandbox-control';
export type {
  SandboxAccountState,
  SandboxControl,
  SandboxControlInit,
  SandboxFault,
  SandboxFaults,
  SandboxQueuedFault,
  SandboxRandomFaults,
  SandboxRandomFaultSettings,
  SandboxRateLimit,
  SandboxRequest,
  SandboxTransaction,
  SandboxWallets,
  SandboxWebhookDelivery,
} from './sandbox-control';
export { parseSandboxArgs, SANDBOX_USAGE } from './cli-options';
export type { SandboxCommand } from './cli-options';
