import 'reflect-metadata';
/** `@malipo/sandbox`: an offline emulator of the Payments Service for your e2e tests. */
export { startSandbox } from './sandbox';
export type { RunningSandbox, SandboxOptions } from './sandbox';
export { parseSandboxArgs } from './cli-options';
