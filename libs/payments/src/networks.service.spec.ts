import { PaymentsValidationError } from './errors';
import type { Network } from './dto/lookups';
import { findNetwork } from './networks.service';

const network = (name: string, accountNumberType: string): Network =>
  ({ id: name, code: name, name, accountNumberType, country: 'KE' }) as Network;

const discovery = {
  mobile: [network('M-Pesa', 'phone'), network('Airtel Money', 'phone')],
  banks: [network('Equity Bank', 'bank'), network('KCB Bank', 'bank')],
};

function refusal(name: string, among?: 'mobile' | 'banks' | 'all'): PaymentsValidationError {
  try {
    findNetwork(discovery, name, among);
  } catch (error) {
    if (error instanceof PaymentsValidationError) return error;
    throw error;
  }
  throw new Error(`findNetwork took ${name}`);
}

describe('findNetwork', () => {
  it('takes the one network a name matches, whole or in part, in any case', () => {
    expect(findNetwork(discovery, 'kcb').name).toBe('KCB Bank');
    expect(findNetwork(discovery, ' equity bank ').name).toBe('Equity Bank');
    expect(findNetwork(discovery, 'pesa', 'mobile').name).toBe('M-Pesa');
  });

  it('refuses a name that matches several networks rather than take the first', () => {
    const error = refusal('Bank');
    expect(error.errors).toEqual([
      expect.objectContaining({ field: 'name', rule: 'isUniqueNetwork' }),
    ]);
    expect(error.errors[0].message).toContain('Equity Bank, KCB Bank');
    expect(refusal('a', 'mobile').errors[0].rule).toBe('isUniqueNetwork');
  });

  it('names the name it could not find, and what is on offer', () => {
    const error = refusal('Stanbic', 'banks');
    expect(error.errors[0]).toMatchObject({ field: 'name', rule: 'isKnownNetwork' });
    expect(error.errors[0].message).toContain('"Stanbic"');
    expect(error.errors[0].message).toContain('on offer: Equity Bank, KCB Bank');
    expect(refusal('').errors[0].rule).toBe('isKnownNetwork');
  });
});
