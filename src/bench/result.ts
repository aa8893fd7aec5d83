// What a run produced: one cell per sweep value (one cell without --sweep), each with its
// measures, histograms and request records; and how that becomes summary.json and the rows
// of requests.jsonl.

import type { BenchConfig, Load } from './config.js';
import type { RequestRecord } from './loop.js';
import { DEFINITIONS, tpotOf, type Histograms, type Measures } from './measures.js';

export interface CellResult {
  /** The sweep value of this cell, e.g. { concurrency: 8 }; null without --sweep. */
  cell: Record<string, number> | null;
  load: Load;
  measures: Measures;
  histograms: Histograms;
  records: RequestRecord[];
}

export interface BenchResult {
  config: BenchConfig;
  startedAt: string;
  cells: CellResult[];
}

const r3 = (v: number | null) => (v === null ? null : Math.round(v * 1000) / 1000);

function publicConfig(c: BenchConfig) {
  const { apiKey: _drop, ...target } = c.target;
  return { target, load: c.load, limits: c.limits, workload: c.workload, slo: c.slo, sweep: c.sweep ?? null };
}

export function summaryJson(res: BenchResult): Record<string, unknown> {
  const cells = res.cells.map((c) => ({ cell: c.cell, load: c.load, ...c.measures }));
  return {
    tool: 'portico bench',
    startedAt: res.startedAt,
    config: publicConfig(res.config),
    definitions: DEFINITIONS,
    ...(res.config.sweep ? { sweep: res.config.sweep } : cells[0]),
    cells,
  };
}

export function requestRow(c: CellResult, r: RequestRecord): Record<string, unknown> {
  return {
    cell: c.cell,
    index: r.index,
    session: r.session,
    turn: r.turn,
    startMs: r3(r.startMs),
    ok: r.ok,
    status: r.status,
    ...(r.ok ? {} : { errorKind: r.errorKind, error: r.error }),
    ttftMs: r3(r.ttftMs),
    ttfoMs: r3(r.ttfoMs),
    tpotMs: r3(tpotOf(r)),
    e2eMs: r3(r.e2eMs),
    chunks: r.ttftMs === null ? 0 : r.gapsMs.length + 1,
    promptTokens: r.promptTokens,
    outputTokens: r.outputTokens,
    reasoningTokens: r.reasoningTokens,
    cachedTokens: r.cachedTokens,
  };
}
