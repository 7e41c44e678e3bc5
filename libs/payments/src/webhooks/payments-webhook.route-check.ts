import { Inject, Injectable, type OnModuleInit } from '@nestjs/common';
import { ModulesContainer } from '@nestjs/core';
import { moduleOptionError } from '../known-options';
import { PAYMENTS_WEBHOOK_ROUTE } from '../payments.constants';
import { printsAsNameOnly } from '../secret-holders';

/** A route as the router matches it: without the slashes around it, in any case. */
function routeKey(path: string): string {
  return path.replace(/^\/+|\/+$/g, '').toLowerCase();
}

/**
 * Fails the boot when another `PaymentsWebhookModule` registration of the app serves this one's
 * route: the router hands every delivery to the first, so the other's handlers never run and its
 * store never sees an event. With two stores (an in-memory one beside a Redis one on other
 * instances), a delivery retried across instances would also be handled twice.
 * @internal
 */
@Injectable()
export class PaymentsWebhookRouteCheck implements OnModuleInit {
  constructor(
    private readonly modules: ModulesContainer,
    @Inject(PAYMENTS_WEBHOOK_ROUTE) private readonly route: string,
  ) {}

  onModuleInit(): void {
    for (const module of this.modules.values()) {
      if (module.providers.get(PaymentsWebhookRouteCheck)?.instance === this) continue;
      const other = module.providers.get(PAYMENTS_WEBHOOK_ROUTE)?.instance;
      if (typeof other !== 'string' || routeKey(other) !== routeKey(this.route)) continue;
      throw moduleOptionError(
        'PaymentsWebhookModule',
        'path',
        'isUnique',
        `Two PaymentsWebhookModule registrations serve the route "/${routeKey(this.route)}": ` +
          'every delivery would go to the first, its store and handlers alone. Register the ' +
          'webhook module once (in the module whose store your instances share), or give each ' +
          'registration its own path.',
      );
    }
  }
}

// It holds the app's module container, which holds the registrations' options, credentials included.
printsAsNameOnly(PaymentsWebhookRouteCheck.prototype, 'PaymentsWebhookRouteCheck');
