import type { InjectionToken } from '@nestjs/common';
import type { ModuleRef, ModulesContainer } from '@nestjs/core';
import { DEFAULT_REGISTRATION_NAME, PAYMENTS_REGISTRATION_NAME } from './payments.constants';

/**
 * The provider `token` of the `PaymentsModule` registration named `account`, or of the unnamed one
 * (`token` is then the service's class), from anywhere in the app, for the modules that act for a
 * registration (webhooks, payout runs).
 *
 * A named registration provides the class too, inside its module, under its named token's alias:
 * Nest's `moduleRef.get(Class, { strict: false })` may answer that one, and a run would pay from
 * another account. So the unnamed registration's is found here in the modules themselves, never in
 * a module that names another registration. A module with the class and no registration name (a
 * test double of the app's) counts as the unnamed registration's.
 * @throws Error when the app has none.
 * @internal
 */
export function registrationProvider<T>(
  moduleRef: ModuleRef,
  modules: ModulesContainer,
  token: InjectionToken,
  account: string | undefined,
): T {
  if (account) return moduleRef.get<T>(token, { strict: false });
  for (const module of modules.values()) {
    const wrapper = module.providers.get(token);
    if (wrapper === undefined || wrapper.instance === undefined || wrapper.instance === null) {
      continue;
    }
    const name: unknown = module.providers.get(PAYMENTS_REGISTRATION_NAME)?.instance;
    if (name !== undefined && name !== DEFAULT_REGISTRATION_NAME) continue;
    return wrapper.instance as T;
  }
  throw new Error(`no unnamed PaymentsModule registration provides ${String(token)}`);
}
