import { Controller, Get, Param, Post, Res } from '@nestjs/common';
import { SandboxResponse, sendHtml } from './http-io';
import { LedgerService, Transaction } from './ledger.service';
import { errorPage, checkoutPage, resultPage } from './checkout.pages';
import { failure, Outcome, success } from './outcomes';
import { SettlementService } from './settlement.service';

const CHOICES: Readonly<Record<'pay' | 'decline', (tx: Transaction) => Outcome>> = {
  pay: (tx) => success(tx),
  decline: (tx) =>
    failure(tx.region, {
      kenya: 'Request Cancelled by user.',
      panAfrican: 'declined by the customer',
    }),
};

/**
 * The hosted checkout behind `checkout_url`: card collections, and pan-African collections with a
 * `redirect_url`. The customer's button settles the transaction and fires its webhook at once.
 */
@Controller('checkout')
export class CheckoutController {
  constructor(
    private readonly ledger: LedgerService,
    private readonly settlement: SettlementService,
  ) {}

  @Get(':reference')
  page(@Param('reference') reference: string, @Res() res: SandboxResponse): void {
    const transaction = this.checkoutTransaction(reference);
    if (!transaction) return notFound(res, reference);
    sendHtml(res, 200, checkoutPage(transaction));
  }

  @Post(':reference/pay')
  pay(@Param('reference') reference: string, @Res() res: SandboxResponse): void {
    this.choose(reference, 'pay', res);
  }

  @Post(':reference/decline')
  decline(@Param('reference') reference: string, @Res() res: SandboxResponse): void {
    this.choose(reference, 'decline', res);
  }

  private choose(reference: string, choice: 'pay' | 'decline', res: SandboxResponse): void {
    const pending = this.checkoutTransaction(reference);
    if (!pending) return notFound(res, reference);
    const settled = this.settlement.settle(reference, CHOICES[choice](pending));
    if (!settled) {
      sendHtml(
        res,
        409,
        errorPage('Already settled', `Payment ${reference} is already ${pending.status}.`),
      );
      return;
    }
    if (settled.redirectUrl) {
      const target = new URL(settled.redirectUrl);
      target.searchParams.set('reference', settled.reference);
      target.searchParams.set('status', settled.status);
      // 303: the browser follows with a GET, whatever the form's method was.
      res.statusCode = 303;
      res.setHeader('location', target.toString());
      res.end();
      return;
    }
    sendHtml(res, 200, resultPage(settled));
  }

  private checkoutTransaction(reference: string): Transaction | undefined {
    const transaction = this.ledger.get(reference);
    return transaction?.settlement === 'checkout' ? transaction : undefined;
  }
}

function notFound(res: SandboxResponse, reference: string): void {
  sendHtml(res, 404, errorPage('Not found', `No checkout for reference ${reference}.`));
}
