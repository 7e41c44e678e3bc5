import type { DiscoveryService, MetadataScanner, Reflector } from '@nestjs/core';

/** A decorated method, bound to its provider's instance. */
export type BoundHandler = (payload: never) => unknown;

/**
 * Every method of the app's static providers that carries the metadata `key` (a list of names,
 * as `@OnPaymentEvent()` and `@OnPayoutRunEvent()` write it), bound to its instance, by name. An
 * instance reached through several providers (`useExisting` aliases) is scanned once. Used by the
 * subpaths' dispatchers at boot: the main entry never loads `@nestjs/core`'s discovery.
 */
export function decoratedMethods<Name extends string>(
  discovery: DiscoveryService,
  scanner: MetadataScanner,
  reflector: Reflector,
  key: string,
): Map<Name, BoundHandler[]> {
  const handlers = new Map<Name, BoundHandler[]>();
  const scanned = new Set<object>();
  for (const wrapper of discovery.getProviders()) {
    const instance: unknown = wrapper.instance;
    if (!wrapper.isDependencyTreeStatic() || typeof instance !== 'object' || instance === null) {
      continue;
    }
    if (scanned.has(instance)) continue;
    scanned.add(instance);
    const prototype = Object.getPrototypeOf(instance) as Record<string, unknown>;
    for (const method of scanner.getAllMethodNames(prototype)) {
      const target = prototype[method];
      if (typeof target !== 'function') continue;
      const names = reflector.get<Name[] | undefined>(key, target);
      for (const name of names ?? []) {
        const list = handlers.get(name) ?? [];
        list.push((payload: never) => (target as BoundHandler).call(instance, payload));
        handlers.set(name, list);
      }
    }
  }
  return handlers;
}
