import type { RunningSandbox } from '../../apps/sandbox/src/sandbox';

/** Calls the sandbox's control API (`/__sandbox/...`) and parses the JSON answer. */
export type SandboxControl = <T>(path: string, method?: string, body?: unknown) => Promise<T>;

/** The sandbox's own control client, in the positional form the tests use. */
export function sandboxControl(sandbox: RunningSandbox): SandboxControl {
  return <T>(path: string, method = 'GET', body?: unknown) =>
    sandbox.control<T>(path, { method, body });
}
