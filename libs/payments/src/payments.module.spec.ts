import { HttpModule, HttpService } from '@nestjs/axios';
import type { DynamicModule } from '@nestjs/common';
import { Body, Controller, Injectable, Module, Post } from '@nestjs/common';
import { ConfigModule, ConfigService } from '@nestjs/config';
import { Test } from '@nestjs/testing';
import { OPERATION_CASES, successBody } from '../spec-support/operation-cases';
import { RecordingServer } from '../spec-support/recording-server';
import { CollectionsService } from './collections.service';
import { PaymentsValidationError } from './errors';
import { PaymentsClient } from './payments-client';
import { DEFAULT_BASE_URL } from './payments.constants';
import { PaymentsModule } from './payments.module';
import type { PaymentsModuleExtras, PaymentsOptionsFactory } from './payments.module-definition';
import { PAYMENTS_MODULE_OPTIONS } from './payments.constants';
import type { PaymentsModuleOptions } from './payments-options.interface';
import { PayoutsService } from './payouts.service';

const CREDENTIALS = { apiUsername: 'api-user', apiPassword: 'boot-secret-123' };

class PaymentsConfig implements PaymentsOptionsFactory {
  createPaymentsOptions(): PaymentsModuleOptions {
    return { ...CREDENTIALS, walletType: 'USD', defaultUsername: 'from-class' };
  }
}

@Module({ providers: [PaymentsConfig], exports: [PaymentsConfig] })
class PaymentsConfigModule {}

type Registration = (
  options: PaymentsModuleOptions,
  extras?: PaymentsModuleExtras,
) => DynamicModule;

/** The two ways to register the module: every behaviour below must hold for both. */
const REGISTRATIONS: [string, Registration][] = [
  ['forRoot', (options, extras) => PaymentsModule.forRoot({ ...options, ...extras })],
  [
    'forRootAsync',
    (options, extras) => PaymentsModule.forRootAsync({ useFactory: () => options, ...extras }),
  ],
];

describe('PaymentsModule', () => {
  describe.each(REGISTRATIONS)('registration with %s', (_how, register) => {
    it('provides the services, the client and the options', async () => {
      const moduleRef = await Test.createTestingModule({
        imports: [
          register({
            ...CREDENTIALS,
            defaultUsername: 'acme',
            defaultCallbackUrl: 'https://a.example/cb',
          }),
        ],
      }).compile();

      const client = moduleRef.get(PaymentsClient);
      expect(client.collections).toBe(moduleRef.get(CollectionsService));
      expect(client.payouts).toBe(moduleRef.get(PayoutsService));
      expect(moduleRef.get(PAYMENTS_MODULE_OPTIONS)).toMatchObject({ defaultUsername: 'acme' });
      expect(client.defaults).toEqual({
        username: 'acme',
        callbackUrl: 'https://a.example/cb',
        walletType: 'local',
      });
      expect(moduleRef.get(CollectionsService).defaults).toEqual(client.defaults);
      expect(moduleRef.get(PayoutsService).defaults).toEqual(client.defaults);
    });

    it('isGlobal makes the services injectable in modules that do not import it', async () => {
      @Injectable()
      class Checkout {
        constructor(readonly collections: CollectionsService) {}
      }
      @Module({ providers: [Checkout] })
      class FeatureModule {}

      const moduleRef = await Test.createTestingModule({
        imports: [register(CREDENTIALS, { isGlobal: true }), FeatureModule],
      }).compile();

      expect(moduleRef.get(Checkout).collections).toBeInstanceOf(CollectionsService);
    });

    it('is not global by default', async () => {
      @Injectable()
      class Checkout {
        constructor(readonly collections: CollectionsService) {}
      }
      @Module({ providers: [Checkout] })
      class FeatureModule {}

      await expect(
        Test.createTestingModule({
          imports: [register(CREDENTIALS), FeatureModule],
        }).compile(),
      ).rejects.toThrow(/CollectionsService/);
    });

    it('keeps isGlobal out of the options', async () => {
      const moduleRef = await Test.createTestingModule({
        imports: [register(CREDENTIALS, { isGlobal: true })],
      }).compile();
      expect(moduleRef.get(PAYMENTS_MODULE_OPTIONS)).not.toHaveProperty('isGlobal');
    });
  });

  describe('forRootAsync sources', () => {
    it('forRootAsync reads options from ConfigService (env)', async () => {
      const env = {
        PAYMENTS_API_USERNAME: 'env-user',
        PAYMENTS_API_PASSWORD: 'env-pass',
        PAYMENTS_WALLET_TYPE: 'USD',
        PAYMENTS_DEFAULT_USERNAME: 'env-account',
        PAYMENTS_DEFAULT_CALLBACK_URL: 'https://env.example/cb',
      };
      const moduleRef = await Test.createTestingModule({
        imports: [
          PaymentsModule.forRootAsync({
            imports: [ConfigModule.forRoot({ ignoreEnvFile: true, load: [() => env] })],
            inject: [ConfigService],
            useFactory: (config: ConfigService): PaymentsModuleOptions => ({
              apiUsername: config.getOrThrow('PAYMENTS_API_USERNAME'),
              apiPassword: config.getOrThrow('PAYMENTS_API_PASSWORD'),
              walletType: config.get('PAYMENTS_WALLET_TYPE'),
              defaultUsername: config.get('PAYMENTS_DEFAULT_USERNAME'),
              defaultCallbackUrl: config.get('PAYMENTS_DEFAULT_CALLBACK_URL'),
            }),
          }),
        ],
      }).compile();

      expect(moduleRef.get(PaymentsClient).defaults).toEqual({
        username: 'env-account',
        callbackUrl: 'https://env.example/cb',
        walletType: 'USD',
      });
    });

    it('forRootAsync accepts an async factory', async () => {
      const moduleRef = await Test.createTestingModule({
        imports: [
          PaymentsModule.forRootAsync({
            useFactory: async () => Promise.resolve({ ...CREDENTIALS, walletType: 'USD' as const }),
          }),
        ],
      }).compile();

      expect(moduleRef.get(PayoutsService).defaults.walletType).toBe('USD');
    });

    it('forRootAsync useClass', async () => {
      const moduleRef = await Test.createTestingModule({
        imports: [PaymentsModule.forRootAsync({ useClass: PaymentsConfig })],
      }).compile();

      expect(moduleRef.get(PaymentsClient).defaults).toEqual({
        username: 'from-class',
        callbackUrl: undefined,
        walletType: 'USD',
      });
    });

    it('forRootAsync useExisting', async () => {
      const moduleRef = await Test.createTestingModule({
        imports: [
          PaymentsModule.forRootAsync({
            imports: [PaymentsConfigModule],
            useExisting: PaymentsConfig,
          }),
        ],
      }).compile();

      expect(moduleRef.get(PaymentsClient).defaults.username).toBe('from-class');
    });

    it('reads options defined by a class (getters), as a useClass factory may return', async () => {
      class Options {
        get apiUsername() {
          return 'getter-user';
        }
        get apiPassword() {
          return 'getter-pass';
        }
        get walletType() {
          return 'USD' as const;
        }
      }
      const moduleRef = await Test.createTestingModule({
        imports: [
          PaymentsModule.forRootAsync({
            useFactory: () => new Options(),
          }),
        ],
      }).compile();
      expect(moduleRef.get(PaymentsClient).defaults.walletType).toBe('USD');
    });
  });

  describe.each(REGISTRATIONS)('options are validated at boot (%s)', (_how, register) => {
    const boot = (options: Record<string, unknown>) =>
      Test.createTestingModule({
        imports: [register(options as unknown as PaymentsModuleOptions)],
      }).compile();

    it.each<[string, Record<string, unknown>, string, string]>([
      ['missing apiUsername', { apiPassword: 'boot-secret-123' }, 'apiUsername', 'isNotEmpty'],
      ['empty apiPassword', { apiUsername: 'u', apiPassword: '' }, 'apiPassword', 'isNotEmpty'],
      ['missing apiPassword', { apiUsername: 'u' }, 'apiPassword', 'isNotEmpty'],
      ['numeric apiPassword', { apiUsername: 'u', apiPassword: 12345 }, 'apiPassword', 'isString'],
      ['unknown walletType', { ...CREDENTIALS, walletType: 'EUR' }, 'walletType', 'isIn'],
      ['negative timeout', { ...CREDENTIALS, timeout: -1 }, 'timeout', 'min'],
      ['zero timeout', { ...CREDENTIALS, timeout: 0 }, 'timeout', 'min'],
      ['string timeout', { ...CREDENTIALS, timeout: '5000' }, 'timeout', 'isInt'],
      ['timeout past the timer limit', { ...CREDENTIALS, timeout: 2 ** 31 }, 'timeout', 'max'],
      [
        'apiUsername with a colon',
        { ...CREDENTIALS, apiUsername: 'a:b' },
        'apiUsername',
        'matches',
      ],
      ['negative maxRetries', { ...CREDENTIALS, maxRetries: -1 }, 'maxRetries', 'min'],
      ['fractional maxRetries', { ...CREDENTIALS, maxRetries: 1.5 }, 'maxRetries', 'isInt'],
      [
        'baseUrl that is no URL',
        { ...CREDENTIALS, baseUrl: 'payments service' },
        'baseUrl',
        'isUrl',
      ],
      [
        'baseUrl with another scheme',
        { ...CREDENTIALS, baseUrl: 'ftp://pay.example.com' },
        'baseUrl',
        'isUrl',
      ],
      [
        'baseUrl carrying credentials',
        { ...CREDENTIALS, baseUrl: 'https://u:boot-secret-123@pay.example.com' },
        'baseUrl',
        'noCredentialsInUrl',
      ],
      [
        'defaultCallbackUrl that is no URL',
        { ...CREDENTIALS, defaultCallbackUrl: 'callback' },
        'defaultCallbackUrl',
        'isUrl',
      ],
      ['debug that is not a boolean', { ...CREDENTIALS, debug: 'true' }, 'debug', 'isBoolean'],
      ['a misspelt option', { ...CREDENTIALS, maxRetry: 3 }, 'maxRetry', 'whitelist'],
      [
        'plain http to a remote host',
        { ...CREDENTIALS, baseUrl: 'http://pay.example.com' },
        'baseUrl',
        'isSecureUrl',
      ],
      [
        'plain http to a private address',
        { ...CREDENTIALS, baseUrl: 'http://10.0.0.5:8080' },
        'baseUrl',
        'isSecureUrl',
      ],
      [
        'allowInsecureHttp that is not a boolean',
        { ...CREDENTIALS, allowInsecureHttp: 'yes' },
        'allowInsecureHttp',
        'isBoolean',
      ],
    ])('fails to start on %s, naming the option', async (_label, options, field, rule) => {
      const error: unknown = await boot(options).catch((e: unknown) => e);

      expect(error).toBeInstanceOf(PaymentsValidationError);
      const validation = error as PaymentsValidationError;
      expect(validation.target).toBe('PaymentsModuleOptions');
      expect(validation.errors).toContainEqual(expect.objectContaining({ field, rule }));
      expect(validation.message).toContain(field);
      expect(
        JSON.stringify(validation) + validation.message + String(validation.stack),
      ).not.toContain('boot-secret-123');
    });

    it.each<[string, Record<string, unknown>, string]>([
      ['missing apiUsername', { apiPassword: 'boot-secret-123' }, 'apiUsername is required'],
      [
        'a timeout read from the environment as text',
        { ...CREDENTIALS, timeout: '5000' },
        'timeout must be a number, not a string (convert an environment variable with Number())',
      ],
      [
        'a maxRetries that Number() made NaN',
        { ...CREDENTIALS, maxRetries: Number('two') },
        'maxRetries must be a number, not NaN',
      ],
    ])(
      'says only what is wrong with %s, not the rules it cannot be measured by',
      async (_label, options, said) => {
        const error = (await boot(options).catch((e: unknown) => e)) as PaymentsValidationError;
        expect(error).toBeInstanceOf(PaymentsValidationError);
        expect(error.errors).toHaveLength(1);
        expect(error.errors[0].message).toContain(said);
      },
    );

    it.each([
      'https://pay.example.com',
      'http://localhost:4010',
      'http://127.0.0.1:4010',
      'http://127.8.9.10',
      'http://[::1]:4010/base',
    ])('accepts %s as baseUrl', async (baseUrl) => {
      await expect(boot({ ...CREDENTIALS, baseUrl })).resolves.toBeDefined();
    });

    it('accepts plain http to a remote host only with allowInsecureHttp', async () => {
      await expect(
        boot({ ...CREDENTIALS, baseUrl: 'http://pay.internal', allowInsecureHttp: true }),
      ).resolves.toBeDefined();
    });

    it('treats empty optional settings as unset and applies the defaults of section 2.1', async () => {
      const moduleRef = await Test.createTestingModule({
        imports: [
          register({
            ...CREDENTIALS,
            defaultUsername: '',
            defaultCallbackUrl: '',
            baseUrl: 'https://pay.example.com',
          }),
        ],
      }).compile();

      expect(moduleRef.get(PaymentsClient).defaults).toEqual({
        username: undefined,
        callbackUrl: undefined,
        walletType: 'local',
      });
    });

    it('refuses an empty baseUrl (an empty staging variable) rather than send to production', async () => {
      const error: unknown = await boot({ ...CREDENTIALS, baseUrl: '' }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(PaymentsValidationError);
      expect((error as PaymentsValidationError).errors).toEqual([
        expect.objectContaining({ field: 'baseUrl', rule: 'isNotEmpty' }),
      ]);
    });
  });

  describe.each(REGISTRATIONS)('HTTP isolation (%s)', (_how, register) => {
    let server: RecordingServer;
    beforeAll(async () => {
      server = await RecordingServer.start();
    });
    afterEach(() => server.reset());
    afterAll(() => server.close());

    it("leaves an app's own HttpModule without retry interceptors", async () => {
      const moduleRef = await Test.createTestingModule({
        imports: [register({ ...CREDENTIALS, baseUrl: server.url }), HttpModule],
      }).compile();
      const appHttp = moduleRef.get(HttpService);
      server.fallback = () => ({ status: 503 });

      await expect(appHttp.axiosRef.post(`${server.url}/elsewhere`, {})).rejects.toMatchObject({
        response: { status: 503 },
      });
      expect(server.requests).toHaveLength(1);
      expect(server.requests[0].headers.authorization).toBeUndefined();
      expect(server.requests[0].headers['idempotency-key']).toBeUndefined();

      server.reset();
      server.fallback = () => ({ status: 503 });
      await expect(
        moduleRef.get(PayoutsService).mpesa(OPERATION_CASES[3].request),
      ).rejects.toMatchObject({ attempts: 3 });
      expect(server.requests).toHaveLength(3);
    });

    it('gives each registration its own options and HTTP client', async () => {
      const first = await Test.createTestingModule({
        imports: [register({ ...CREDENTIALS, baseUrl: server.url, walletType: 'USD' })],
      }).compile();
      const second = await Test.createTestingModule({
        imports: [
          register({
            apiUsername: 'other',
            apiPassword: 'other-pass',
            baseUrl: server.url,
          }),
        ],
      }).compile();
      server.fallback = () => ({ status: 200, body: successBody('payout') });

      await first.get(PayoutsService).mpesa(OPERATION_CASES[3].request);
      await second.get(PayoutsService).mpesa(OPERATION_CASES[3].request);

      expect(server.requests.map((r) => (r.json as { wallet_type: string }).wallet_type)).toEqual([
        'USD',
        undefined,
      ]);
      expect(server.requests[0].headers.authorization).not.toBe(
        server.requests[1].headers.authorization,
      );
    });

    it("defaults to the production service's URL, as the service's own client does", () => {
      expect(DEFAULT_BASE_URL).toBe('https://api.payd.money');
    });
  });

  describe('mocking in a controller test, as a user would', () => {
    @Controller('orders')
    class OrdersController {
      constructor(private readonly collections: CollectionsService) {}

      @Post('pay')
      async pay(@Body() body: { phone: string; amount: number }) {
        const response = await this.collections.mpesa({
          phoneNumber: body.phone,
          amount: body.amount,
          narration: 'Order',
        });
        return { reference: response.transactionReference };
      }
    }

    it('overrides CollectionsService with a jest mock', async () => {
      const mpesa = jest.fn().mockResolvedValue({ transactionReference: 'TX-MOCK' });
      const moduleRef = await Test.createTestingModule({
        imports: [PaymentsModule.forRoot(CREDENTIALS)],
        controllers: [OrdersController],
      })
        .overrideProvider(CollectionsService)
        .useValue({ mpesa })
        .compile();

      const result = await moduleRef
        .get(OrdersController)
        .pay({ phone: '0712345678', amount: 100 });

      expect(result).toEqual({ reference: 'TX-MOCK' });
      expect(mpesa).toHaveBeenCalledWith({
        phoneNumber: '0712345678',
        amount: 100,
        narration: 'Order',
      });
    });

    it('or provides the mock without the module at all', async () => {
      const moduleRef = await Test.createTestingModule({
        controllers: [OrdersController],
        providers: [
          {
            provide: CollectionsService,
            useValue: { mpesa: jest.fn().mockResolvedValue({ transactionReference: 'TX-2' }) },
          },
        ],
      }).compile();

      await expect(
        moduleRef.get(OrdersController).pay({ phone: '0712345678', amount: 100 }),
      ).resolves.toEqual({ reference: 'TX-2' });
    });
  });
});
