import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { chromium } from 'playwright-core';
import { OPERATION_CASES } from '../../libs/payments/spec-support/operation-cases';
import { DemoWithSandbox } from '../support/demo-with-sandbox';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
// Without the background-networking flags Chromium keeps dialling Google on a closed network.
const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

describe('hosted card checkout in a real browser', () => {
  let world: DemoWithSandbox;
  let browser: Browser;

  beforeAll(async () => {
    world = await DemoWithSandbox.start();
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: CHROMIUM_ARGS,
      headless: true,
    });
  });
  afterAll(async () => {
    await browser?.close();
    await world?.close();
  });

  it('opens the checkout page, clicks Pay, and the order turns paid in the demo', async () => {
    const request: Record<string, unknown> = { ...OPERATION_CASES[1].request };
    delete request.callbackUrl;
    const { order } = await world.order('collections/card', request);
    expect(order.checkoutUrl).toBeDefined();

    const page = await browser.newPage();
    await page.goto(order.checkoutUrl!);
    // Wait for the page the click leads to, not for the load state of the one still shown: the
    // form's navigation may not have begun when click() returns.
    await Promise.all([
      page.waitForURL((url) => url.toString() !== order.checkoutUrl),
      page.getByRole('button', { name: 'Pay' }).click(),
    ]);
    const artifacts = join(__dirname, 'artifacts');
    mkdirSync(artifacts, { recursive: true });
    await page.screenshot({ path: join(artifacts, 'after-pay.png') });

    expect(await page.textContent('body')).toMatch(/success/i);
    const settled = await world.settled(order.id);
    expect(settled.status).toBe('SUCCESS');
    expect(settled.events).toEqual([expect.objectContaining({ event: 'collection.succeeded' })]);
  });
});
