import type { InjectionToken } from '@nestjs/common';
import type { ModuleRef, ModulesContainer } from '@nestjs/core';
import { moduleOptionError } from './known-options';
import { DEFAULT_REGISTRATION_NAME, PAYMENTS_REGISTRATION_NAME } from './payments.constants';

type AppModule = ReturnType<ModulesContainer['values']> extends Iterator<infer M> ? M : never;
type ProviderWrapper = NonNullable<ReturnType<AppModule['providers']['get']>>;

/**
 * The name of the `PaymentsModule` registration `module` is (`default` for the unnamed one), or
 * undefined for any other module.
 * @internal
 */
export function registrationNameOf(module: AppModule): unknown {
  return module.providers.get(PAYMENTS_REGISTRATION_NAME)?.instance;
}

/**
 * Whether the provider of `wrapper` is made once, at boot: not request-scoped nor transient (its
 * instance is then Nest's placeholder, never built).
 * @internal
 */
export function isBuiltAtBoot(wrapper: ProviderWrapper): boolean {
  return !wrapper.isTransient && wrapper.isDependencyTreeStatic();
}

/**
 * The provider `token` of the `PaymentsModule` registration named `account`, or of the unnamed one
 * (`token` is then the service's class), from anywhere in the app, for the modules that act for a
 * registration (webhooks, payout runs).
 *
 * Found in the registration's own module, so that every token comes from one registration. Nest's
 * `moduleRef.get(Class, { strict: false })` may answer another module's provider of the class (a
 * named registration's, or an app's module that re-provides a named one's service under the
 * class), and a run would pay from another account. Only when the app has no such registration is
 * a provider of the token elsewhere taken (an app's test double): by token for a named account,
 * and for the unnamed one only in a module that names no registration.
 * @throws PaymentsValidationError when the registration is request-scoped or transient: it has no
 *   instance made at boot; Error when the app has none.
 * @internal
 */
export function registrationProvider<T>(
  moduleRef: ModuleRef,
  modules: ModulesContainer,
  token: InjectionToken,
  account: string | undefined,
): T {
  const registration = account ?? DEFAULT_REGISTRATION_NAME;
  let double: ProviderWrapper | undefined;
  for (const module of modules.values()) {
    const wrapper = module.providers.get(token);
    if (wrapper === undefined) continue;
    const name = registrationNameOf(module);
    if (name === registration) return builtAtBoot<T>(wrapper, token, registration);
    if (name === undefined) double ??= wrapper;
  }
  if (account !== undefined) return moduleRef.get<T>(token, { strict: false });
  if (double !== undefined) return builtAtBoot<T>(double, token, registration);
  throw new Error(`no unnamed PaymentsModule registration provides ${String(token)}`);
}

/** The instance of `wrapper`, which must be one made once, at boot. */
function builtAtBoot<T>(wrapper: ProviderWrapper, token: InjectionToken, registration: string): T {
  if (!isBuiltAtBoot(wrapper)) {
    throw moduleOptionError(
      'PaymentsModule',
      'inject',
      'isStatic',
      `The PaymentsModule registration "${registration}" is request-scoped or transient (its ` +
        'options inject REQUEST, or a provider of such a scope): payout runs and webhook ' +
        `confirmation act for it outside any request, and need its ${tokenName(token)} made once ` +
        'at boot. Give them a registration whose options do not depend on the request.',
    );
  }
  if (wrapper.instance === undefined || wrapper.instance === null) {
    throw new Error(`${tokenName(token)} of "${registration}" is not instantiated`);
  }
  return wrapper.instance as T;
}

function tokenName(token: InjectionToken): string {
  return typeof token === 'function' ? token.name : String(token);
}
