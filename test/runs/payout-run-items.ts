import type { PayoutRunItemInput } from '@malipo/nestjs/runs';

/** An M-Pesa item of a run. */
export type MpesaRunItem = Extract<PayoutRunItemInput, { operation: 'payouts.mpesa' }>;

/** `count` M-Pesa payouts of 100 + i KES to distinct numbers; every tenth number fails. */
export function mpesaItems(count: number, callbackUrl: string): MpesaRunItem[] {
  return Array.from({ length: count }, (_, i) => ({
    itemId: `emp-${i}`,
    operation: 'payouts.mpesa' as const,
    request: {
      // A number ending in 0000 makes the sandbox's payout fail.
      phoneNumber: `07${String(i).padStart(4, '0')}${i % 10 === 9 ? '0000' : '1234'}`,
      amount: 100 + i,
      narration: `Salary ${i}`,
      callbackUrl,
    },
  }));
}
