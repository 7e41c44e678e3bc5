import { plainToInstance, Transform } from 'class-transformer';
import {
  IsBoolean,
  IsIn,
  IsInt,
  IsNotEmpty,
  IsOptional,
  IsString,
  IsUrl,
  Max,
  Min,
  validateSync,
} from 'class-validator';

const URL_RULE = { protocols: ['http', 'https'], require_protocol: true, require_tld: false };
const REDIS_URL_RULE = { ...URL_RULE, protocols: ['redis', 'rediss'] };

/** The demo's environment, validated at boot. Credentials come only from here. */
export class DemoEnvironment {
  @IsString()
  @IsNotEmpty()
  PAYMENTS_API_USERNAME!: string;

  @IsString()
  @IsNotEmpty()
  PAYMENTS_API_PASSWORD!: string;

  @IsUrl(URL_RULE)
  PAYMENTS_BASE_URL!: string;

  @IsOptional()
  @IsIn(['local', 'USD'])
  PAYMENTS_WALLET_TYPE?: 'local' | 'USD';

  @IsOptional()
  @IsString()
  PAYMENTS_DEFAULT_USERNAME?: string;

  @IsOptional()
  @IsUrl(URL_RULE)
  PAYMENTS_DEFAULT_CALLBACK_URL?: string;

  @IsOptional()
  @IsInt()
  @Min(1)
  PAYMENTS_TIMEOUT_MS?: number;

  @IsOptional()
  @IsInt()
  @Min(0)
  @Max(10)
  PAYMENTS_MAX_RETRIES?: number;

  // Implicit conversion would turn the string "false" into true.
  @IsOptional()
  @Transform(({ value }: { value: unknown }) =>
    value === 'true' ? true : value === 'false' ? false : value,
  )
  @IsBoolean()
  PAYMENTS_DEBUG?: boolean;

  /**
   * Redis shared by every instance of the demo (`redis://host:6379`): webhook claims, the
   * duplicate-execution journal and the payments journal live there, so a delivery to any instance
   * runs its handlers once, and a call's journal entry outlives a crash. Unset: each instance
   * remembers in memory (fine for one instance; `npm start` needs no Redis), and loses its
   * payments journal on restart.
   */
  @IsOptional()
  @IsUrl(REDIS_URL_RULE)
  REDIS_URL?: string;
}

/** Validates raw environment variables; throws naming every bad variable (never its value). */
export function validateDemoEnvironment(raw: Record<string, unknown>): DemoEnvironment {
  const present = Object.fromEntries(Object.entries(raw).filter(([, value]) => value !== ''));
  const environment = plainToInstance(DemoEnvironment, present, {
    enableImplicitConversion: true,
    excludeExtraneousValues: false,
  });
  const errors = validateSync(environment, {
    whitelist: true,
    validationError: { target: false, value: false },
  });
  if (errors.length > 0) {
    const problems = errors.map(
      (e) => `${e.property}: ${Object.keys(e.constraints ?? {}).join(', ')}`,
    );
    throw new Error(`Invalid environment: ${problems.join('; ')}`);
  }
  return environment;
}
