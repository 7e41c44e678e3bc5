import { PAYOUT_RUN_ITEM_STATES } from '@malipo/nestjs/runs';
import type { PayoutRunItemState } from '@malipo/nestjs/runs';
import { PAYROLL_COLUMNS, PAYROLL_KINDS } from './payroll-rows';

/**
 * The payroll page: server-rendered HTML and a little inline script, no framework. Everything
 * that came from a file or the service (item ids, reasons, run names) is put in the page by the
 * script with `textContent`, never as HTML; the Content-Security-Policy of the route runs only
 * this page's own script (by nonce) as a second line.
 */

function escapeHtml(text: string): string {
  return text.replace(
    /[&<>"']/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] ?? c,
  );
}

/** Labels of the item states, in the order of the runs docs. */
const STATE_LABELS: Record<PayoutRunItemState, string> = {
  queued: 'Queued',
  sending: 'Sending',
  accepted: 'Accepted, outcome to come',
  succeeded: 'Succeeded',
  failed: 'Failed',
  refused: 'Refused (never executed)',
  in_doubt: 'In doubt (may have executed)',
};

/** Done items fill the bar from the left; queued ones are the empty rest. */
const BAR_ORDER: readonly PayoutRunItemState[] = [
  'succeeded',
  'failed',
  'refused',
  'in_doubt',
  'accepted',
  'sending',
];

/** JSON inside a script element: `<` escaped so no value can close the element. */
function scriptJson(value: unknown): string {
  return JSON.stringify(value).replace(/</g, '\\u003c');
}

const PAYROLL_KIND_COUNT = Object.keys(PAYROLL_KINDS).length;

function columnsTable(): string {
  const rows = PAYROLL_COLUMNS.map(
    (column) =>
      `<tr><td><code>${escapeHtml(column.name)}</code></td><td>${escapeHtml(column.kinds.length === PAYROLL_KIND_COUNT ? 'all' : column.kinds.join(', '))}</td><td>${escapeHtml(column.required)}</td><td>${escapeHtml(column.description)}</td></tr>`,
  ).join('\n');
  return `<table class="columns">
<thead><tr><th>Column</th><th>For kinds</th><th>Required</th><th>What it holds</th></tr></thead>
<tbody>
${rows}
</tbody>
</table>`;
}

function stateRows(): string {
  return PAYOUT_RUN_ITEM_STATES.map(
    (state) =>
      `<tr id="state-${state}"><td><span class="swatch s-${state}"></span>${escapeHtml(STATE_LABELS[state])}</td><td class="count">0</td><td class="amount">–</td></tr>`,
  ).join('\n');
}

const STYLE = `
  body { font-family: system-ui, sans-serif; max-width: 60rem; margin: 2rem auto; padding: 0 1rem; color: #1f2328; }
  h1 { margin-bottom: .25rem; }
  label { display: block; margin: .75rem 0 .25rem; font-weight: 600; }
  input[type=text], input[type=number] { font-size: 1rem; padding: .3rem; width: 20rem; }
  textarea { width: 100%; height: 10rem; font-family: ui-monospace, monospace; font-size: .85rem; }
  button { font-size: 1rem; padding: .45rem 1.2rem; cursor: pointer; margin: .75rem .5rem 0 0; }
  table { border-collapse: collapse; margin: .75rem 0; width: 100%; }
  th, td { border-bottom: 1px solid #d0d7de; padding: .3rem .5rem; text-align: left; vertical-align: top; }
  td.count, td.amount { font-variant-numeric: tabular-nums; }
  table.columns { font-size: .85rem; }
  .note { color: #59636e; }
  .error { color: #cf222e; font-weight: 600; }
  .bar { display: flex; height: 1.5rem; background: #eaeef2; border-radius: .3rem; overflow: hidden; margin: .75rem 0 .25rem; }
  .bar span { display: block; height: 100%; transition: width .3s; }
  .swatch { display: inline-block; width: .8rem; height: .8rem; border-radius: .15rem; margin-right: .4rem; vertical-align: -.05rem; }
  .s-queued { background: #eaeef2; border: 1px solid #d0d7de; }
  .s-sending { background: #54aeff; }
  .s-accepted { background: #0969da; }
  .s-succeeded { background: #1a7f37; }
  .s-failed { background: #cf222e; }
  .s-refused { background: #8c959f; }
  .s-in_doubt { background: #bf8700; }
  #refusal h2 { color: #cf222e; }
  caption { text-align: left; font-weight: 600; padding: .3rem 0; }
`;

/**
 * The script: posts the CSV, then shows the report of a refusal or follows the run every
 * half-second until no item is open (then every 5 s while some are in doubt: their webhook or a
 * reconcile can still settle them). The run's id goes into the address, so a reload follows it.
 */
const SCRIPT = `
(function () {
  'use strict';
  var STATES = CONFIG.states;
  var byId = function (id) { return document.getElementById(id); };
  var runId = null;
  var timer = null;

  function row(cells) {
    var tr = document.createElement('tr');
    cells.forEach(function (text) {
      var td = document.createElement('td');
      td.textContent = text;
      tr.appendChild(td);
    });
    return tr;
  }
  function fill(tbody, rows) {
    tbody.replaceChildren.apply(tbody, rows.map(row));
  }
  function money(amounts) {
    var currencies = Object.keys(amounts).sort();
    if (currencies.length === 0) return '–';
    return currencies.map(function (currency) {
      return currency + ' ' + amounts[currency].toLocaleString('en-US', { maximumFractionDigits: 2 });
    }).join('; ');
  }
  function showError(message) {
    byId('error').textContent = message;
    byId('error').hidden = !message;
  }
  function answerOf(response) {
    return response.text().then(function (text) {
      var body = {};
      try { body = JSON.parse(text); } catch (e) { body = { message: text }; }
      return { status: response.status, body: body };
    });
  }

  function showRefusal(body) {
    byId('progress').hidden = true;
    byId('refusal').hidden = false;
    byId('refusal-message').textContent = body.message;
    byId('problems').hidden = body.problems.length === 0;
    fill(byId('problems').tBodies[0], body.problems.map(function (p) {
      return [p.lines.join(', ') || '–', p.itemId, p.field, p.rule, p.message];
    }));
    byId('shortfalls').hidden = body.shortfalls.length === 0;
    fill(byId('shortfalls').tBodies[0], body.shortfalls.map(function (s) {
      return [s.currency, s.required.toLocaleString('en-US'), s.available.toLocaleString('en-US')];
    }));
  }

  function render(p) {
    byId('refusal').hidden = true;
    byId('progress').hidden = false;
    byId('run-name').textContent = p.run.name || 'Payout run';
    byId('run-id').textContent = p.run.runId;
    byId('run-state').textContent = p.run.state;
    var bar = byId('bar');
    bar.setAttribute('aria-valuenow', String(p.percent));
    STATES.forEach(function (state) {
      var segment = byId('bar-' + state);
      if (segment) segment.style.width = (p.total === 0 ? 0 : (p.states[state].count * 100) / p.total) + '%';
      var tr = byId('state-' + state);
      tr.querySelector('.count').textContent = String(p.states[state].count);
      tr.querySelector('.amount').textContent = money(p.states[state].amounts);
    });
    byId('percent').textContent =
      p.done + ' of ' + p.total + ' items done (' + p.percent + '%)';
    byId('pause').disabled = p.run.state !== 'running';
    byId('resume').disabled = p.run.state !== 'paused';
    byId('cancel').disabled = p.run.state !== 'running' && p.run.state !== 'paused';
    byId('attention').hidden = p.attention.length === 0;
    fill(byId('attention').tBodies[0], p.attention.map(function (item) {
      return [item.itemId, item.state, item.currency + ' ' + item.amount.toLocaleString('en-US'), item.reason || ''];
    }));
  }

  function schedule(p) {
    clearTimeout(timer);
    if (p.open || p.run.state === 'running') timer = setTimeout(poll, 500);
    else if (p.states.in_doubt.count > 0) timer = setTimeout(poll, 5000);
  }
  function poll() {
    fetch('/payroll/runs/' + encodeURIComponent(runId))
      .then(answerOf)
      .then(function (answer) {
        if (answer.status !== 200) throw new Error(answer.body.message || 'HTTP ' + answer.status);
        showError('');
        render(answer.body);
        schedule(answer.body);
      })
      .catch(function (error) {
        showError('Could not read the run: ' + error.message);
        if (!/No payout run/.test(error.message)) timer = setTimeout(poll, 2000);
      });
  }
  function follow(id) {
    runId = id;
    history.replaceState(null, '', '/payroll?run=' + encodeURIComponent(id));
    byId('download').href = '/payroll/runs/' + encodeURIComponent(id) + '/report.csv';
    poll();
  }

  byId('file').addEventListener('change', function () {
    var file = this.files[0];
    if (file) file.text().then(function (text) { byId('csv').value = text; });
  });
  byId('sample').addEventListener('click', function () {
    fetch('/payroll/sample.csv').then(function (r) { return r.text(); }).then(function (text) {
      byId('csv').value = text;
    });
  });
  byId('payroll-form').addEventListener('submit', function (event) {
    event.preventDefault();
    var query = new URLSearchParams();
    if (byId('name').value) query.set('name', byId('name').value);
    if (byId('rate').value) query.set('ratePerSecond', byId('rate').value);
    byId('submit').disabled = true;
    showError('');
    fetch('/payroll/runs?' + query, {
      method: 'POST',
      headers: { 'content-type': 'text/csv' },
      body: byId('csv').value,
    })
      .then(answerOf)
      .then(function (answer) {
        if (answer.status === 201) follow(answer.body.runId);
        else if (answer.status === 400 && answer.body.problems) showRefusal(answer.body);
        else showError(answer.body.message || 'HTTP ' + answer.status);
      })
      .catch(function (error) { showError(error.message); })
      .finally(function () { byId('submit').disabled = false; });
  });
  ['pause', 'resume', 'cancel'].forEach(function (action) {
    byId(action).addEventListener('click', function () {
      fetch('/payroll/runs/' + encodeURIComponent(runId) + '/' + action, { method: 'POST' })
        .then(answerOf)
        .then(function (answer) {
          if (answer.status !== 200) throw new Error(answer.body.message || 'HTTP ' + answer.status);
          render(answer.body);
          schedule(answer.body);
        })
        .catch(function (error) { showError(error.message); });
    });
  });

  var fromAddress = new URLSearchParams(location.search).get('run');
  if (fromAddress) follow(fromAddress);
})();
`;

/** The page; `nonce` is the one of this response's Content-Security-Policy. */
export function payrollPage(nonce: string): string {
  const segments = BAR_ORDER.map(
    (state) => `<span id="bar-${state}" class="s-${state}"></span>`,
  ).join('');
  const config = scriptJson({ states: PAYOUT_RUN_ITEM_STATES });
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Payroll · Malipo demo shop</title>
<style nonce="${escapeHtml(nonce)}">${STYLE}</style>
</head>
<body>
<p class="note"><small>Malipo demo shop &middot; <a href="/docs">API docs</a></small></p>
<h1>Payroll</h1>
<p class="note">Upload a CSV with one payout per line: M-Pesa, pan-African or merchant. Every row is
checked and the balance read before anything is sent; one broken row refuses the whole file.
Runs live in this process's memory: they are lost when the demo restarts (the payments journal
says what was in flight).</p>

<form id="payroll-form">
  <label for="name">Run name</label>
  <input id="name" type="text" maxlength="200" placeholder="March salaries">
  <label for="rate">Payouts per second <span class="note">(empty: 10)</span></label>
  <input id="rate" type="number" min="1" step="1">
  <label for="file">CSV file</label>
  <input id="file" type="file" accept=".csv,text/csv">
  <label for="csv">or paste it here</label>
  <textarea id="csv" spellcheck="false" placeholder="itemId,kind,phoneNumber,amount,narration"></textarea>
  <button id="submit" type="submit">Validate and pay</button>
  <button id="sample" type="button">Use the sample file</button>
  <a href="/payroll/sample.csv">Download the sample</a>
</form>
<p id="error" class="error" role="alert" hidden></p>

<section id="refusal" hidden>
  <h2>Refused: nothing was sent</h2>
  <p id="refusal-message"></p>
  <table id="problems">
    <thead><tr><th>Line</th><th>Item</th><th>Field</th><th>Rule</th><th>Problem</th></tr></thead>
    <tbody></tbody>
  </table>
  <table id="shortfalls">
    <thead><tr><th>Currency</th><th>Run total</th><th>Balance</th></tr></thead>
    <tbody></tbody>
  </table>
</section>

<section id="progress" hidden>
  <h2><span id="run-name"></span> <small class="note">(<span id="run-state"></span>)</small></h2>
  <p class="note">Run <code id="run-id"></code></p>
  <div id="bar" class="bar" role="progressbar" aria-label="Items done" aria-valuemin="0" aria-valuemax="100" aria-valuenow="0">${segments}</div>
  <p id="percent"></p>
  <table id="states">
    <thead><tr><th>State</th><th>Items</th><th>Amount</th></tr></thead>
    <tbody>
${stateRows()}
    </tbody>
  </table>
  <button id="pause" type="button" disabled>Pause</button>
  <button id="resume" type="button" disabled>Resume</button>
  <button id="cancel" type="button" disabled>Cancel</button>
  <a id="download" href="#" download>Download report (CSV)</a>
  <table id="attention" hidden>
    <caption>Needs attention</caption>
    <thead><tr><th>Item</th><th>State</th><th>Amount</th><th>Reason</th></tr></thead>
    <tbody></tbody>
  </table>
  <p><a href="/payroll">New run</a></p>
</section>

<h2>Columns</h2>
<p class="note">The first line names the columns, in any order; a row leaves empty the columns of
other kinds. With the sandbox, a phone number ending in 0000 fails and the amount 666 is
declined.</p>
${columnsTable()}
<script nonce="${escapeHtml(nonce)}">
var CONFIG = ${config};
${SCRIPT}
</script>
</body>
</html>
`;
}

/** The Content-Security-Policy of the page: its own script and style only, calls to itself only. */
export function payrollPagePolicy(nonce: string): string {
  return [
    "default-src 'none'",
    `script-src 'nonce-${nonce}'`,
    `style-src 'nonce-${nonce}'`,
    "connect-src 'self'",
    "img-src 'self'",
    "form-action 'self'",
    "base-uri 'none'",
    "frame-ancestors 'none'",
  ].join('; ');
}

/** A file of each kind of row the sandbox pays (numbers from its network discovery). */
export const PAYROLL_SAMPLE_CSV = [
  'itemId,kind,phoneNumber,amount,narration,walletType,username,businessAccount,businessNumber,currency,accountHolderName,accountNumber,accountName,transactionChannel,networkCode,channelId,providerName,providerCode',
  'EMP-001,mpesa,0712345678,45000,"March salary, Wanjiku",,,,,,,,,,,,,',
  'EMP-002,mpesa,+254722000111,38500,March salary,,,,,,,,,,,,,',
  'EMP-003,mpesa,0733400000,52000,March salary (fails in the sandbox),,,,,,,,,,,,,',
  'RENT-03,merchant,+254712345678,75000,Office rent March,,,888880,ACC-1,,,,,,,,,',
  'SUP-007,pan-african,+2348031234567,20000,Supplier 7 invoice 114,USD,,,,NGN,Ada Obi,0123456789,bank,bank,9b2eb62d-555f-4467-8135-16d34d1a5bcf,ba3ec5eb-2a3b-4377-b9fc-78d744eb54c2,Guaranty Trust Bank,058',
  '',
].join('\r\n');
