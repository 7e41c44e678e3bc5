/** Calls the sandbox's control API (`/__sandbox/...`) and parses the JSON answer. */
export type SandboxControl = <T>(path: string, method?: string, body?: unknown) => Promise<T>;

export function sandboxControl(sandboxUrl: string): SandboxControl {
  return async <T>(path: string, method = 'GET', body?: unknown): Promise<T> => {
    const response = await fetch(`${sandboxUrl}/__sandbox/${path}`, {
      method,
      headers: body === undefined ? undefined : { 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    if (!response.ok) {
      throw new Error(
        `sandbox ${method} ${path}: HTTP ${response.status} ${await response.text()}`,
      );
    }
    const text = await response.text();
    return (text ? JSON.parse(text) : undefined) as T;
  };
}
