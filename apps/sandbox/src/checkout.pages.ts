import type { Transaction } from './ledger.service';

/** The hosted card checkout pages: plain HTML, no scripts, so any HTTP client can drive them. */

export function escapeHtml(text: string): string {
  return text.replace(
    /[&<>"']/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] ?? c,
  );
}

function formatAmount(transaction: Transaction): string {
  const amount = new Intl.NumberFormat('en-US', { minimumFractionDigits: 2 }).format(
    transaction.amount,
  );
  return `${transaction.currency} ${amount}`;
}

function layout(title: string, body: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title>
<style>
  body { font-family: system-ui, sans-serif; max-width: 28rem; margin: 3rem auto; padding: 0 1rem; }
  dl { display: grid; grid-template-columns: auto 1fr; gap: .25rem 1rem; }
  dt { color: #555; }
  form { display: inline-block; margin-right: .5rem; }
  button { font-size: 1rem; padding: .5rem 1.5rem; cursor: pointer; }
</style>
</head>
<body>
<p><small>Payments Service sandbox &middot; no real money moves</small></p>
${body}
</body>
</html>
`;
}

function details(transaction: Transaction): string {
  return `<dl>
  <dt>Amount</dt><dd id="amount">${escapeHtml(formatAmount(transaction))}</dd>
  <dt>Narration</dt><dd id="narration">${escapeHtml(transaction.narration)}</dd>
  <dt>Reference</dt><dd id="reference">${escapeHtml(transaction.reference)}</dd>
  <dt>Status</dt><dd id="status">${escapeHtml(transaction.status)}</dd>
</dl>`;
}

export function checkoutPage(transaction: Transaction): string {
  const action = `/checkout/${escapeHtml(encodeURIComponent(transaction.reference))}`;
  const forms =
    transaction.settledAt === null
      ? `<form method="post" action="${action}/pay"><button id="pay" type="submit">Pay</button></form>
<form method="post" action="${action}/decline"><button id="decline" type="submit">Decline</button></form>`
      : `<p>This payment is already settled.</p>`;
  return layout('Checkout', `<h1>Checkout</h1>\n${details(transaction)}\n${forms}`);
}

export function resultPage(transaction: Transaction): string {
  const title = transaction.status === 'success' ? 'Payment successful' : 'Payment declined';
  return layout(title, `<h1>${title}</h1>\n${details(transaction)}`);
}

export function errorPage(title: string, message: string): string {
  return layout(title, `<h1>${escapeHtml(title)}</h1>\n<p>${escapeHtml(message)}</p>`);
}
