/** The results document (bench/results.json) and its markdown rendering on stdout. */
import type {
  ClientSummary,
  JournalComparison,
  PairedComparison,
  RunsByClient,
  Target,
} from './analysis';
import {
  CLIENT_KEYS,
  CLIENT_LABELS,
  JOURNAL_CLIENT_KEYS,
  type ClientKey,
  type JournalClientKey,
} from './clients';
import { TARGET_CONCURRENCY, type BenchConfig, type RESPONSE_SIZES, type TARGETS } from './config';
import type { MachineInfo } from './machine';
import type { JournalCapResult } from './journal';
import type { HeapGrowthResult, InflightResult } from './memory';
import type { WorkerResults } from './protocol';
import type { StartupResult } from './startup';
import type { Spread } from './stats';

type SizeKey = keyof typeof RESPONSE_SIZES;

const SIZE_NAMES: Record<SizeKey, string> = {
  kb1: 'padded to ~1 KB',
  kb100: 'padded to ~100 KB',
};

/** The journal's memory (run.ts, journalMemory), with (a) measured again beside it. */
export interface JournalMemory {
  inflight: Partial<Record<'a' | JournalClientKey, InflightResult>>;
  heapGrowth: Partial<Record<'a' | JournalClientKey, HeapGrowthResult>>;
  /** The in-memory journal at its bound; only when (a+j) ran. */
  cap?: JournalCapResult;
  /** Measures that failed, each with its error: printed, and the bench exits non-zero. */
  failures: string[];
}

/**
 * The results. Sections other than the load rounds and the journal's are absent when only the
 * journal section ran (BENCH_JOURNAL_ONLY=1).
 */
export interface BenchDocument {
  machine: MachineInfo & { otherProcessesCpuPercent: number | undefined };
  config: BenchConfig;
  targetsConfig: typeof TARGETS;
  standardBodyBytes: number;
  /** By concurrency, then client. */
  clients: Record<number, Partial<Record<ClientKey, ClientSummary>>>;
  comparisons: Record<number, PairedComparison>;
  sizes?: Record<
    SizeKey,
    {
      bodyBytes: number;
      clients: Partial<Record<ClientKey, ClientSummary>>;
      comparison: PairedComparison;
    }
  >;
  inflight?: Partial<Record<ClientKey, InflightResult>>;
  heapGrowth?: HeapGrowthResult;
  micro?: WorkerResults['micro'];
  journal?: JournalMemory;
  startup?: StartupResult;
  targets: Target[];
  durationSeconds: number;
  /** Every run, in round order, for anyone who wants other statistics. */
  raw: { load: Record<number, RunsByClient>; sizes?: Record<SizeKey, RunsByClient> };
}

const fixed = (value: number | undefined, digits: number) =>
  value === undefined || Number.isNaN(value)
    ? '–'
    : value.toLocaleString('en-US', {
        minimumFractionDigits: digits,
        maximumFractionDigits: digits,
      });
const signed = (value: number | undefined, digits: number) =>
  value !== undefined && value > 0 ? `+${fixed(value, digits)}` : fixed(value, digits);
/** "median (min–max)". */
const spreadText = (s: Spread | undefined, digits: number, sign = false) => {
  if (s === undefined) return '–';
  const show = sign ? signed : fixed;
  return `${show(s.median, digits)} (${show(s.min, digits)} – ${show(s.max, digits)})`;
};
const kb = (bytes: number) => `${fixed(bytes / 1024, bytes < 10_240 ? 1 : 0)} KB`;

function markdownTable(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i].length)));
  const line = (cells: string[]) =>
    `| ${cells.map((cell, i) => (i === 0 ? cell.padEnd(widths[i]) : cell.padStart(widths[i]))).join(' | ')} |`;
  const rule = `| ${widths.map((w, i) => (i === 0 ? '-'.repeat(w) : `${'-'.repeat(w - 1)}:`)).join(' | ')} |`;
  return [line(header), rule, ...rows.map(line)].join('\n');
}

function header(doc: BenchDocument): string[] {
  const { machine, config } = doc;
  const library = machine.library;
  return [
    '# Cost per call of @malipo/nestjs',
    '',
    `- Machine: ${machine.cpu}, ${machine.cores} cores, ${machine.totalMemoryGB} GiB, ${machine.os}, Node ${machine.node}`,
    `- Date: ${machine.date}; library commit ${library?.commit ?? '?'} (${library?.branch ?? '?'}), ${library?.uncommittedLibraryFiles ?? '?'} uncommitted files in libs/payments`,
    `- Load: ${config.rounds} interleaved rounds, new processes for every client in each round (warmed with ${config.initialWarmupCalls} calls), clients in balanced Latin-square order; each client's run ${config.secondsPerRun} s of calls in ${config.slicesPerRun} slices taken in turn with the other clients' slices (the last calls of each slice awaited), after ${config.warmupCalls}+ warm-up calls at its concurrency; every client and the server in a process of its own`,
    `- Other processes used at most ${machine.otherProcessesCpuPercent ?? '?'}% of the machine during any load round (a quiet machine shows ≤ 5%)`,
    ...(config.journalOnly
      ? [
          `- Journal section only (BENCH_JOURNAL_ONLY=1): clients ${config.clients.map((key) => CLIENT_LABELS[key].split(' ')[0]).join(', ')} at concurrency ${config.concurrencies.join(', ')}, and the journal's memory`,
        ]
      : []),
    '',
  ];
}

function loadTables(doc: BenchDocument): string[] {
  const out: string[] = ['## Throughput and CPU per call', ''];
  for (const concurrency of doc.config.concurrencies) {
    const summaries = doc.clients[concurrency] ?? {};
    out.push(
      `### Concurrency ${concurrency}`,
      '',
      markdownTable(
        [
          'client',
          'calls/s',
          'CPU µs/call',
          'CPU range',
          'p50 ms',
          'p99 ms',
          'event loop busy',
          'server µs/call',
        ],
        CLIENT_KEYS.filter((key) => summaries[key] !== undefined).map((key) => {
          const s = summaries[key] as ClientSummary;
          return [
            CLIENT_LABELS[key],
            fixed(s.callsPerSecond.median, 0),
            fixed(s.cpuUsPerCall.median, 1),
            `${fixed(s.cpuUsPerCall.min, 0)}–${fixed(s.cpuUsPerCall.max, 0)}`,
            fixed(s.p50Ms, 2),
            fixed(s.p99Ms, 2),
            `${fixed(s.eventLoopUtilization * 100, 0)}%`,
            fixed(s.serverCpuUsPerCall, 1),
          ];
        }),
      ),
      '',
    );
  }
  out.push(
    '### Paired by round: median (min – max)',
    '',
    'Throughput ratios and CPU differences computed within each round, then summarised.',
    '',
    markdownTable(
      [
        'concurrency',
        'a/b0',
        'a/(b0+d)',
        'a/b',
        'a/c',
        'a/d',
        'CPU a − b0 µs/call',
        'CPU a − (b0+d) µs/call',
        'CPU (b0+d) − b0 µs/call',
      ],
      doc.config.concurrencies.map((concurrency) => {
        const c = doc.comparisons[concurrency];
        return [
          String(concurrency),
          spreadText(c?.throughput.b0, 2),
          spreadText(c?.throughput.b0d, 2),
          spreadText(c?.throughput.b, 2),
          spreadText(c?.throughput.c, 2),
          spreadText(c?.throughput.d, 2),
          spreadText(c?.cpuOverAB0Us, 1, true),
          spreadText(c?.cpuOverAB0dUs, 1, true),
          spreadText(c?.deadlineUnderLoadUs, 1, true),
        ];
      }),
    ),
    '',
  );
  return out;
}

function sizeTable(doc: BenchDocument): string[] {
  if (doc.sizes === undefined) return [];
  const standard = doc.clients[doc.config.sizeConcurrency];
  const standardComparison = doc.comparisons[doc.config.sizeConcurrency];
  const rows: { name: string; bytes: number; clients: typeof standard; c: PairedComparison }[] = [];
  if (standard !== undefined && standardComparison !== undefined) {
    rows.push({
      name: 'real answer',
      bytes: doc.standardBodyBytes,
      clients: standard,
      c: standardComparison,
    });
  }
  for (const [size, entry] of Object.entries(doc.sizes) as [
    SizeKey,
    NonNullable<BenchDocument['sizes']>[SizeKey],
  ][]) {
    rows.push({
      name: SIZE_NAMES[size],
      bytes: entry.bodyBytes,
      clients: entry.clients,
      c: entry.comparison,
    });
  }
  return [
    `## Response size (concurrency ${doc.config.sizeConcurrency}, ${doc.config.sizeRounds} rounds)`,
    '',
    markdownTable(
      [
        'response',
        'body',
        '(a) calls/s',
        '(a) CPU µs',
        '(b0) calls/s',
        '(b0) CPU µs',
        'a/b0',
        'CPU a − b0 µs/call',
      ],
      rows.map(({ name, bytes, clients, c }) => [
        name,
        kb(bytes),
        fixed(clients.a?.callsPerSecond.median, 0),
        fixed(clients.a?.cpuUsPerCall.median, 1),
        fixed(clients.b0?.callsPerSecond.median, 0),
        fixed(clients.b0?.cpuUsPerCall.median, 1),
        spreadText(c.throughput.b0, 2),
        spreadText(c.cpuOverAB0Us, 1, true),
      ]),
    ),
    '',
  ];
}

function memoryTables(doc: BenchDocument): string[] {
  const { inflight, heapGrowth } = doc;
  if (inflight === undefined || heapGrowth === undefined) return [];
  const calls = Object.values(inflight)[0]?.calls ?? doc.config.inflightCalls;
  const overB0 = (key: ClientKey) =>
    key === 'b0' || inflight[key] === undefined || inflight.b0 === undefined
      ? ''
      : signed((inflight[key]?.heapBytesPerCall ?? 0) - inflight.b0.heapBytesPerCall, 0);
  return [
    `## Memory per in-flight call (${calls.toLocaleString('en-US')} calls pending, forced GC, each client in a fresh process)`,
    '',
    markdownTable(
      ['client', 'heap B/call', 'vs (b0)', 'RSS B/call', 'external B/call', 'settled in ms'],
      CLIENT_KEYS.filter((key) => inflight[key] !== undefined).map((key) => {
        const m = inflight[key] as InflightResult;
        return [
          CLIENT_LABELS[key],
          fixed(m.heapBytesPerCall, 0),
          overB0(key),
          fixed(m.rssBytesPerCall, 0),
          fixed(m.externalBytesPerCall, 0),
          fixed(m.settleMs, 0),
        ];
      }),
    ),
    '',
    `Heap after ${heapGrowth.calls.toLocaleString('en-US')} calls through (a), forced GC before and after: ${fixed(heapGrowth.heapUsedBeforeBytes / 1e6, 2)} → ${fixed(heapGrowth.heapUsedAfterBytes / 1e6, 2)} MB (**${signed(heapGrowth.heapGrowthBytes / 1e3, 1)} KB**); RSS ${signed(heapGrowth.rssGrowthBytes / 1e6, 2)} MB.`,
    '',
  ];
}

function microTables(doc: BenchDocument): string[] {
  if (doc.micro === undefined) return [];
  const { operations, deadline, wholeCall } = doc.micro;
  const underLoad = doc.comparisons[TARGET_CONCURRENCY]?.deadlineUnderLoadUs;
  return [
    '## Micro-benchmarks (no I/O)',
    '',
    markdownTable(
      ['validation + wire encoding', 'µs/call', 'bytes allocated/call', 'of which encoding µs'],
      operations.map((m) => [
        m.operation,
        fixed(m.usPerCall, 2),
        fixed(m.bytesPerCall, 0),
        fixed(m.wireUsPerCall, 3),
      ]),
    ),
    '',
    `Whole call without I/O (axios adapter answering at once, concurrency 64, 8 paired rounds of ${wholeCall.callsPerRound.toLocaleString('en-US')} calls): (a) \`OperationRunner\` ${fixed(wholeCall.libraryUsPerCall, 1)} µs/call, (b0) \`request\` + \`JSON.parse\` ${fixed(wholeCall.axiosUsPerCall, 1)} µs/call; (a) − (b0) = **${spreadText(wholeCall.overheadUs, 1, true)} µs/call**: the library's own code, before what load on real sockets adds.`,
    '',
    `Per-attempt deadline (timer + close listener + clearing): **${fixed(deadline.usPerAttempt, 2)} µs/attempt** in isolation (rounds ${deadline.rounds.map((r) => fixed(r, 2)).join(', ')}); under load at concurrency ${TARGET_CONCURRENCY}, (b0+d) − (b0), the deadline in place of axios's own timeout, = ${spreadText(underLoad, 1, true)} µs/call (paired rounds: a difference within the rounds' spread is noise).`,
    '',
  ];
}

function startupTable(doc: BenchDocument): string[] {
  const s = doc.startup;
  if (s === undefined) return [];
  const row = (name: string, value: Spread) => [
    name,
    fixed(value.median, 1),
    `${fixed(value.min, 1)}–${fixed(value.max, 1)}`,
  ];
  return [
    `## Startup (compiled library, dist/libs/payments; ${s.repetitions} fresh processes each, medians)`,
    '',
    markdownTable(
      ['measure', 'ms', 'range'],
      [
        row("require('@malipo/nestjs'), cold", s.libraryColdRequireMs),
        row(
          "require('@malipo/nestjs') after @nestjs/core and @nestjs/common",
          s.libraryInNestRequireMs,
        ),
        row('empty Nest app: requires + createApplicationContext', s.emptyAppReadyMs),
        row('app importing PaymentsModule.forRoot: requires + context', s.paymentsAppReadyMs),
        row('createApplicationContext alone, empty app', s.emptyContextMs),
        row('createApplicationContext alone, with PaymentsModule', s.paymentsContextMs),
      ],
    ),
    '',
    `PaymentsModule adds ${spreadText(s.libraryAddsMs, 1)} ms to a ready application context, ${spreadText(s.libraryAddsToContextMs, 1)} ms of it in createApplicationContext (paired by repetition).`,
    '',
  ];
}

function targetTable(doc: BenchDocument): string[] {
  const at = doc.comparisons[TARGET_CONCURRENCY];
  // A ratio to three places, so that one just under its bound does not print as the bound.
  const digits = (unit: string) => (unit === 'µs' ? 1 : unit === 'B' ? 0 : unit === '' ? 3 : 2);
  return [
    "## Targets (issue 14; the journal's, issue item 6)",
    '',
    markdownTable(
      ['target', 'measured', 'verdict'],
      doc.targets.map((t) => [
        t.description,
        `${fixed(t.measured, digits(t.unit))}${t.unit === '' ? '' : ` ${t.unit}`}`,
        t.pass ? 'PASS' : 'MISS',
      ]),
    ),
    '',
    ...(at?.throughput.c === undefined && at?.throughput.d === undefined
      ? []
      : [
          `Distance to the platform's limit at concurrency ${TARGET_CONCURRENCY}: (a)/(c) node:http = ${spreadText(at.throughput.c, 2)}, (a)/(d) undici = ${spreadText(at.throughput.d, 2)} of their throughput.`,
          '',
        ]),
    `Run took ${fixed(doc.durationSeconds, 0)} s; raw figures in bench/${doc.config.journalOnly ? 'results.journal.json' : 'results.json'}.`,
    '',
  ];
}

/** The most entries (a+j)'s journal held in one round's process: one per call it made. */
function journalEntriesHeld(doc: BenchDocument): number {
  const { config } = doc;
  const perRound: number[] = [];
  for (let round = 0; round < config.rounds; round++) {
    let entries = config.initialWarmupCalls;
    for (const concurrency of config.concurrencies) {
      const run = doc.raw.load[concurrency]?.aj?.[round];
      if (run !== undefined) entries += Math.max(config.warmupCalls, 2 * concurrency) + run.calls;
    }
    perRound.push(entries);
  }
  return Math.max(...perRound);
}

function journalSection(doc: BenchDocument): string[] {
  const concurrencies = doc.config.concurrencies.filter((c) =>
    JOURNAL_CLIENT_KEYS.some((key) => doc.comparisons[c]?.journal[key] !== undefined),
  );
  const rows = concurrencies.flatMap((concurrency) =>
    JOURNAL_CLIENT_KEYS.flatMap((key) => {
      const c = doc.comparisons[concurrency]?.journal[key];
      return c === undefined ? [] : [{ key, concurrency, c }];
    }),
  );
  if (rows.length === 0 && doc.journal === undefined) return [];
  const summary = (concurrency: number, key: ClientKey) => doc.clients[concurrency]?.[key];
  const label = (key: JournalClientKey) => CLIENT_LABELS[key].split(' ')[0];
  const out: string[] = [
    "## The journal's cost",
    '',
    `(a+j) and (a+r) are (a) with \`journal: new InMemoryPaymentsJournal()\` and with \`new RedisPaymentsJournal({ url })\` on a redis-server the bench started (loopback, persistence off), measured in the same rounds as (a) and (b0): paired by round, median (min – max). Each call writes its entry before it is sent and records its end after (one \`create\`, then one \`replace\` over the entry it wrote; a \`get\` only when another writer changed it in between).`,
    '',
  ];
  if (rows.length > 0) {
    const row = (values: (r: { key: JournalClientKey; c: JournalComparison }) => string[]) =>
      rows.map((r) => [label(r.key), String(r.concurrency), ...values(r)]);
    out.push(
      markdownTable(
        [
          'client',
          'concurrency',
          'x/(b0)',
          '(a)/(b0), same rounds',
          'x/(a)',
          'CPU x − (a) µs/call',
        ],
        row(({ c }) => [
          spreadText(c.throughputOverB0, 3),
          spreadText(c.aOverB0, 3),
          spreadText(c.throughputOverA, 3),
          spreadText(c.cpuOverAUs, 1, true),
        ]),
      ),
      '',
      markdownTable(
        [
          'client',
          'concurrency',
          '(a) p50 ms',
          'p50 x − (a) ms',
          '(a) p99 ms',
          'p99 x − (a) ms',
          'store CPU µs/call',
          'Redis commands/call',
        ],
        rows.map(({ key, concurrency, c }) => {
          const mine = summary(concurrency, key);
          const a = summary(concurrency, 'a');
          const inProcess = key === 'aj' ? 'in (a+j)' : '–';
          return [
            label(key),
            String(concurrency),
            fixed(a?.p50Ms, 3),
            spreadText(c.p50OverAMs, 3, true),
            fixed(a?.p99Ms, 2),
            spreadText(c.p99OverAMs, 2, true),
            mine?.storeCpuUsPerCall === undefined ? inProcess : fixed(mine.storeCpuUsPerCall, 1),
            fixed(mine?.storeCommandsPerCall, 2),
          ];
        }),
      ),
      '',
      "Store CPU is redis-server's own (user + system, from its INFO) over (a+r)'s slices, per call; the in-memory journal's work is in (a+j)'s CPU. Redis commands per call include those its Lua scripts run: a call is two round trips (the create script, then the replace script).",
      '',
    );
    if (doc.raw.load[doc.config.concurrencies[0]]?.aj !== undefined) {
      out.push(
        `(a+j)'s journal held up to ${journalEntriesHeld(doc).toLocaleString('en-US')} entries by the end of a round (one per call since its process started, warm-up included): under its bound of 100,000, so no entry was forgotten during the rounds; see the bound below.`,
        '',
      );
    }
  }
  const memory = doc.journal;
  if (memory !== undefined) {
    const a = memory.inflight.a;
    const inflight = (['a', ...JOURNAL_CLIENT_KEYS] as const).flatMap((key) => {
      const m = memory.inflight[key];
      if (m === undefined) return [];
      const over =
        key === 'a' || a === undefined
          ? ''
          : ` (${signed(m.heapBytesPerCall - a.heapBytesPerCall, 0)})`;
      return [`${CLIENT_LABELS[key].split(' ')[0]} ${fixed(m.heapBytesPerCall, 0)} B${over}`];
    });
    const growth = (['a', ...JOURNAL_CLIENT_KEYS] as const).flatMap((key) => {
      const g = memory.heapGrowth[key];
      if (g === undefined) return [];
      return [
        `${CLIENT_LABELS[key].split(' ')[0]} ${signed(g.heapGrowthBytes / 1e6, 2)} MB (${signed(g.heapGrowthBytes / g.calls, 0)} B/call)`,
      ];
    });
    const calls = Object.values(memory.heapGrowth)[0]?.calls ?? doc.config.journalHeapCalls;
    out.push(
      `Memory, each client in a fresh process, forced GC: heap per in-flight call (${doc.config.inflightCalls.toLocaleString('en-US')} calls held, started ${doc.config.journalInflightBatch} at a time; vs (a)): ${inflight.join(', ')}. Heap kept after ${calls.toLocaleString('en-US')} more calls (warmed with ${doc.config.initialWarmupCalls.toLocaleString('en-US')}): ${growth.join(', ')}. (a+j)'s journal keeps every entry until its bound (default 100,000 entries), which is what it holds per call, its index by reference included (each answer of the bench's server carries a reference of its own, as the service's do). These figures are not comparable with (a)'s memory figures above and are kept apart from its targets.`,
      '',
    );
    const cap = memory.cap;
    if (cap !== undefined) {
      out.push(
        `InMemoryPaymentsJournal at its bound of ${cap.entries.toLocaleString('en-US')} entries (\`create\` alone, no I/O, medians of 5 × ${cap.creates} creates): **${fixed(cap.settledUs, 1)} µs** per create when its oldest entries are settled (a webhook or a reconcile pass settled them), **${fixed(cap.noneSettledUs, 1)} µs** when none is (every entry \`accepted\`, as the bench's calls leave them: each create then forgets the oldest open entry and logs a warning, whose printing is not counted here); ${fixed(cap.emptyUs, 1)} µs into a journal below its bound.`,
        '',
      );
    }
    if (memory.failures.length > 0) {
      out.push(`**Failed:** ${memory.failures.join('; ')}.`, '');
    }
  }
  return out;
}

export function renderReport(doc: BenchDocument): string {
  return [
    ...header(doc),
    ...loadTables(doc),
    ...sizeTable(doc),
    ...memoryTables(doc),
    ...microTables(doc),
    ...startupTable(doc),
    ...journalSection(doc),
    ...targetTable(doc),
  ].join('\n');
}
