// One `portico bench` run: resolve the model, build the workload, run each cell (warm-up,
// then the measured phase), measure, and write the output folder.

import { mkdirSync, writeFileSync, createWriteStream } from 'node:fs';
import { join } from 'node:path';
import { once } from 'node:events';
import { cellLoad, type BenchConfig, type Load } from './config.js';
import { Client } from './client.js';
import { runPhase, type RequestRecord } from './loop.js';
import { measure } from './measures.js';
import { ProgressLine } from './progress.js';
import { reportHtml } from './report-html.js';
import { reportPng } from './report-png.js';
import { requestRow, summaryJson, type BenchResult, type CellResult } from './result.js';
import { buildWorkload } from './workload.js';

/** The server's first model (GET /v1/models), for a run without --model. */
export async function firstModel(url: string, apiKey: string | undefined): Promise<string> {
  const client = new Client(url, apiKey, 1);
  try {
    const res = await client.get('/v1/models');
    if (res.status !== 200) throw new Error(`GET /v1/models answered ${res.status}: ${res.body.slice(0, 200)}`);
    const body = JSON.parse(res.body) as { data?: { id: string }[] };
    if (!body.data?.length) throw new Error('the server lists no models (GET /v1/models); give --model');
    return body.data[0].id;
  } finally {
    client.close();
  }
}

function inFlight(load: Load): number {
  return load.kind === 'closed' ? load.concurrency : Math.min(load.maxConcurrency, 4096);
}

export async function runBench(config: BenchConfig, progressOut: NodeJS.WriteStream = process.stderr): Promise<BenchResult> {
  const { target, limits, workload: spec } = config;
  const cellsToRun = config.sweep ? config.sweep.values.map((v) => ({ cell: { [config.sweep!.param]: v }, load: cellLoad(config.load, config.sweep!, v) })) : [{ cell: null, load: config.load }];
  const wanted = limits.warmup + (limits.requests ?? 100_000);
  const workload = buildWorkload(spec, wanted);
  const progress = config.progress ? new ProgressLine(progressOut) : undefined;
  const result: BenchResult = { config, startedAt: new Date().toISOString(), cells: [] };
  const countTokens = (r: RequestRecord) => {
    if (r.ok && r.outputTokens === null && workload.tokenizer) r.outputTokens = workload.tokenizer.count(r.reasoning + r.text);
    progress?.record(r);
  };
  let seed = spec.seed;
  for (const { cell, load } of cellsToRun) {
    const client = new Client(target.url, target.apiKey, inFlight(load));
    try {
      const name = cell ? Object.entries(cell).map(([k, v]) => `${k} ${v}`).join(', ') : 'bench';
      if (limits.warmup > 0) {
        progress?.begin(`${name} warm-up`, limits.warmup, null);
        await runPhase(client, target, workload, { load, requests: limits.warmup, durationS: null, firstSession: 0, seed: seed++ }, countTokens);
      }
      progress?.begin(name, limits.requests, limits.durationS);
      const phase = await runPhase(client, target, workload, { load, requests: limits.requests, durationS: limits.durationS, firstSession: limits.warmup, seed: seed++ }, countTokens);
      progress?.stop();
      const { measures, histograms } = measure(phase.records, phase.durationS, Object.keys(config.slo).length ? config.slo : undefined, phase.clientCpuS);
      result.cells.push({ cell, load, measures, histograms, records: phase.records });
    } finally {
      progress?.stop();
      client.close();
    }
  }
  if (config.output) await writeOutput(config.output, result);
  return result;
}

async function writeOutput(dir: string, res: BenchResult): Promise<void> {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'summary.json'), `${JSON.stringify(summaryJson(res), null, 2)}\n`);
  const rows = createWriteStream(join(dir, 'requests.jsonl'));
  for (const c of res.cells as CellResult[]) {
    for (const r of c.records) if (!rows.write(`${JSON.stringify(requestRow(c, r))}\n`)) await once(rows, 'drain');
  }
  rows.end();
  await once(rows, 'finish');
  writeFileSync(join(dir, 'report.html'), reportHtml(res));
  writeFileSync(join(dir, 'report.png'), reportPng(res));
}
