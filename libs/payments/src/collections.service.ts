import { Injectable } from '@nestjs/common';
import {
  CardCollectionRequest,
  MpesaCollectionRequest,
  PanAfricanCollectionRequest,
} from './dto/collection-requests';
import type {
  CardCollectionResponse,
  MpesaCollectionResponse,
  PanAfricanCollectionResponse,
} from './dto/responses';
import { OPERATIONS } from './operations';
import type { PaymentsCallOptions, PaymentsDefaults } from './payments-options.interface';
import { OperationRunner } from './operation-runner';

/**
 * Collections (pay-in). Every method validates before sending, retries transient failures with one
 * idempotency key, and rejects with `PaymentsValidationError` or `ServiceAPIError`.
 */
@Injectable()
export class CollectionsService {
  constructor(private readonly runner: OperationRunner) {}

  /** Client defaults (section 2.2). */
  get defaults(): PaymentsDefaults {
    return this.runner.defaults;
  }

  /** M-Pesa STK push to a Kenyan phone. `success` means the push was initiated. */
  mpesa(
    request: MpesaCollectionRequest,
    options?: PaymentsCallOptions,
  ): Promise<MpesaCollectionResponse> {
    return this.runner.execute(OPERATIONS.collectionsMpesa, request, options);
  }

  /** Hosted card checkout; redirect the customer to `checkoutUrl`. */
  card(
    request: CardCollectionRequest,
    options?: PaymentsCallOptions,
  ): Promise<CardCollectionResponse> {
    return this.runner.execute(OPERATIONS.collectionsCard, request, options);
  }

  /** Pan-African mobile-money or bank collection. */
  panAfrican(
    request: PanAfricanCollectionRequest,
    options?: PaymentsCallOptions,
  ): Promise<PanAfricanCollectionResponse> {
    return this.runner.execute(OPERATIONS.collectionsPanAfrican, request, options);
  }
}
