import { Injectable } from '@nestjs/common';
import type { TransferRequest } from './dto/transfer-request';
import type { TransferResponse } from './dto/responses';
import { OPERATIONS } from './operations';
import type { PaymentsCallOptions } from './payments-options.interface';
import { OperationRunner } from './operation-runner';

/** Transfers between two accounts of the service. */
@Injectable()
export class TransfersService {
  constructor(private readonly runner: OperationRunner) {}

  /** Sends money to another account (`POST /api/v2/p2p`), funded from the request's or the client's wallet. */
  send(request: TransferRequest, options?: PaymentsCallOptions): Promise<TransferResponse> {
    return this.runner.execute(OPERATIONS.transfersSend, request, options);
  }
}
