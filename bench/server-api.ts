/**
 * What the benchmark server (server.ts) answers and how it is driven, apart from the server itself
 * so that client processes can import it without building its answers.
 */

/** The real service's answer to `collections.mpesa` (docs/wire-contract.md). */
export const RESPONSE_RECORD = {
  payment_method: 'mobile',
  status: 'SUCCESS',
  // Each answer of the bench's server writes its own number over the zeros, as the service gives
  // each transaction its own reference: the journal takes a reference two calls share for neither.
  transaction_reference: 'TX-0000000000',
  success: true,
  message: 'Processed successfully',
  trackingId: '',
  reference: '',
  result: null,
} as const;

/** Whether `value` is a reference the bench's server answers: `TX-` and ten digits. */
export function isBenchReference(value: unknown): boolean {
  return typeof value === 'string' && /^TX-\d{10}$/.test(value);
}

/**
 * The record padded to about `bytes` with order lines under a key the library does not know:
 * realistic JSON (objects, strings, numbers) rather than one long string, so that parsing costs
 * what a large real answer would.
 */
export function paddedRecord(bytes: number): Record<string, unknown> {
  const lines: Record<string, unknown>[] = [];
  const record: Record<string, unknown> = { ...RESPONSE_RECORD, line_items: lines };
  let size = JSON.stringify(record).length;
  for (let i = 0; size < bytes; i++) {
    const line = {
      sku: `SKU-${String(i).padStart(6, '0')}`,
      description: `Item ${i} of order 42`,
      quantity: 1 + (i % 3),
      unit_price: 150 + i,
      currency: 'KES',
    };
    lines.push(line);
    size += JSON.stringify(line).length + 1;
  }
  return record;
}

export type ServerPorts = Record<'standard' | 'kb1' | 'kb100' | 'hold', number>;

/** Message the child sends once every port listens. */
export interface ServerReady {
  ports: ServerPorts;
  bodyBytes: Record<keyof ServerPorts, number>;
}

/** Reply to any message from the parent: the server's own CPU so far, to show it is not the bottleneck. */
export interface ServerCpu {
  cpuMicros: number;
}

export const HOLD_PATHS = {
  hold: '/_bench/hold',
  release: '/_bench/release',
  held: '/_bench/held',
} as const;
