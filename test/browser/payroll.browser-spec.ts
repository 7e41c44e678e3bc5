import { readFile } from 'node:fs/promises';
import type { Browser, Page } from 'playwright-core';
import { chromium } from 'playwright-core';
import { parseCsv } from '../../apps/demo/src/payroll/payroll-csv';
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

/** Bounds only a broken run: a busy CI machine may need more than the default 30 s. */
const SETTLED = { timeout: 45_000 };

/** 20 M-Pesa rows; the sandbox fails the one whose number ends in 0000 (E7). */
function payrollCsv(): string {
  const rows = Array.from({ length: 20 }, (_, i) => {
    const phone = i === 7 ? '0712340000' : `07${String(i).padStart(4, '0')}1234`;
    return `E${i},mpesa,${phone},${1000 + i},"Salary ${i}, March"`;
  });
  return ['itemId,kind,phoneNumber,amount,narration', ...rows, ''].join('\r\n');
}

/** The text of each cell of each row of a table body. */
async function tableRows(page: Page, selector: string): Promise<string[][]> {
  const rows = await page.locator(`${selector} tbody tr`).all();
  return Promise.all(rows.map((row) => row.locator('td').allTextContents()));
}

describe('payroll page in a real browser', () => {
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
  beforeEach(() => world.control('reset', 'POST'));
  afterAll(async () => {
    await browser?.close();
    await world?.close();
  });

  it('uploads a CSV, follows the run to 100% with counts per state, downloads the report', async () => {
    const context = await browser.newContext({ acceptDownloads: true });
    const page = await context.newPage();
    const pageErrors: Error[] = [];
    page.on('pageerror', (error) => pageErrors.push(error));
    await page.goto(`${world.demo.url}/payroll`);

    await page.setInputFiles('#file', {
      name: 'march.csv',
      mimeType: 'text/csv',
      buffer: Buffer.from(payrollCsv()),
    });
    // The page reads the file into the text area; the button sends the text area.
    await page.waitForFunction("document.querySelector('#csv').value !== ''");
    await page.fill('#name', 'March salaries');
    await page.getByRole('button', { name: 'Validate and pay' }).click();

    await page.locator('[role=progressbar][aria-valuenow="100"]').waitFor(SETTLED);
    await page.locator('#run-state:text-is("completed")').waitFor(SETTLED);
    expect(await page.textContent('#run-name')).toBe('March salaries');
    expect(await page.textContent('#percent')).toBe('20 of 20 items done (100%)');
    const states = Object.fromEntries(
      (await tableRows(page, '#states')).map(([state, count, amount]) => [state, [count, amount]]),
    );
    // 1000 + ... + 1019, without E7's 1007.
    expect(states['Succeeded']).toEqual(['19', 'KES 19,183']);
    expect(states['Failed']).toEqual(['1', 'KES 1,007']);
    expect(states['Queued']).toEqual(['0', '–']);
    // A failed item says what settled it (docs/payout-runs.md, "Item states").
    expect(await tableRows(page, '#attention')).toEqual([
      ['E7', 'failed', 'KES 1,007', expect.stringMatching(/^failed: (webhook|status)/)],
    ]);
    expect(await page.isDisabled('#pause')).toBe(true);
    expect(new URL(page.url()).searchParams.get('run')).toBe(await page.textContent('#run-id'));
    await page.screenshot({ path: '/tmp/payroll.png', fullPage: true });

    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.click('text=Download report (CSV)'),
    ]);
    expect(download.suggestedFilename()).toMatch(/^payroll-[0-9a-f-]{36}\.csv$/);
    const [header, ...lines] = parseCsv(await readFile(await download.path(), 'utf8')).map(
      (record) => record.cells,
    );
    expect(header.slice(0, 5)).toEqual(['item_id', 'operation', 'state', 'amount', 'currency']);
    expect(lines).toHaveLength(20);
    expect(lines.map((cells) => cells[0])).toEqual(Array.from({ length: 20 }, (_, i) => `E${i}`));
    expect(lines.filter((cells) => cells[2] === 'failed').map((cells) => cells[0])).toEqual(['E7']);
    expect(lines.filter((cells) => cells[2] === 'succeeded')).toHaveLength(19);
    expect(pageErrors).toEqual([]);
    await context.close();
  });

  it('shows the report of a refused file, naming row, field and rule, as text', async () => {
    const page = await browser.newPage();
    await page.goto(`${world.demo.url}/payroll`);
    // An item id made of markup: the report must show it, not run it.
    const markupId = '<img/src/onerror=window.__payrollXss=1>';
    const csv = [
      'itemId,kind,phoneNumber,amount,narration',
      'E1,mpesa,0712000001,1000,Salary',
      'E2,mpesa,0712000002,1000,Salary',
      'E3,mpesa,0712000003,5,Salary',
      `${markupId},mpesa,12345,1000,<b>bonus</b>`,
    ].join('\n');
    await page.fill('#csv', csv);
    await page.getByRole('button', { name: 'Validate and pay' }).click();

    await page.waitForSelector('#problems tbody tr');
    expect(await page.textContent('#refusal h2')).toBe('Refused: nothing was sent');
    const problems = await tableRows(page, '#problems');
    expect(problems.map((cells) => cells.slice(0, 4))).toEqual([
      ['4', 'E3', 'amount', 'min'],
      // Item ids are restricted to safe characters (docs/payout-runs.md), markup is not one.
      ['5', markupId, 'itemId', 'isPayoutRunItemId'],
      ['5', markupId, 'phoneNumber', 'isKenyanPhoneNumber'],
    ]);
    expect(await page.isHidden('#shortfalls')).toBe(true);
    expect(await page.isHidden('#progress')).toBe(true);
    expect(await page.$$('#problems img')).toEqual([]);
    expect(await page.evaluate('window.__payrollXss')).toBeUndefined();
    const sent = (await world.control<{ method: string }[]>('requests')).filter(
      (request) => request.method === 'POST',
    );
    expect(sent).toEqual([]);
    await page.close();
  });
});
