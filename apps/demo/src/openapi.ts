import type { INestApplication } from '@nestjs/common';
import { DocumentBuilder, SwaggerModule } from '@nestjs/swagger';
import { applyPaymentsSwagger } from '@malipo/nestjs/swagger';

/**
 * Serves the OpenAPI page at `/docs` and the document at `/docs-json`. The library's request
 * DTOs get their schemas from `@malipo/nestjs/swagger`, with this app's own webhook as the
 * callback example, so "Try it out" settles the order.
 */
export function setupOpenApi(app: INestApplication, callbackUrl: string): void {
  applyPaymentsSwagger({ callbackUrl });
  const config = new DocumentBuilder()
    .setTitle('Malipo demo shop')
    .setDescription(
      'Orders paid and paid out through @malipo/nestjs; outcomes arrive at /webhooks/payments.',
    )
    .setVersion('1.0')
    .build();
  SwaggerModule.setup('docs', app, () => SwaggerModule.createDocument(app, config));
}
