import { PayoutRunCreationError } from './payout-run.errors';
import { PayoutRunExistsError } from './payout-run.store';

describe('PayoutRunCreationError', () => {
  it('says what stopped the creation: another one still writing the run, or a failure', () => {
    const taken = new PayoutRunCreationError('payroll-1', false, new PayoutRunExistsError('p'));
    expect(taken.message).toContain('another creation of it was still writing it after 30 s');
    expect(taken.message).toContain('call create() again with runId payroll-1');

    const failed = new PayoutRunCreationError('payroll-1', true, new Error('Command timed out'));
    expect(failed.message).toContain(
      'may have started paying: its store, journal or engine failed',
    );
    expect(failed.message).not.toContain('Command timed out');
  });
});
