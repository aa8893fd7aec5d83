// Which leg of a disaggregated request a vLLM Generate is on the mock engine, from the
// worker's role (its KV connector's kv_role) and the request's kv_transfer_params, and what a
// prefill leg returns for its decode leg (NIXL's shape).
//
// vLLM's router sends the prefill leg first (max_tokens 1, stream false, params
// {"do_remote_decode":true,"do_remote_prefill":false}), drains it, and sends the original
// request to the decode worker with the params the prefill leg's GenerateComplete carried
// (kv_transfer_params_json, field 12): do_remote_prefill true, remote_host / remote_port
// (the prefill worker's side channel), remote_request_id (what the decode worker asks for).
// With MooncakeConnector the router mints a transfer id instead: the prefill leg carries
// {"do_remote_decode":true,...,"transfer_id"} and returns nothing, the decode leg
// {"do_remote_prefill":true,"transfer_id","remote_engine_id","remote_bootstrap_addr":
// "http://HOST:PORT"} (the prefill worker's bootstrap server, i.e. --bootstrap-port).
// A decode worker given no params computes the prompt itself, as vLLM does; so does any
// worker given params it has no part in.

import { Code, ConnectError } from '@connectrpc/connect';

import type { GenerateRequest } from '../gen/vllm_engine_pb.js';
import { requestKey, transferKey } from './kv-rendezvous.js';
import type { MockContext } from './mock-context.js';
import type { PdPlan } from './pd-leg.js';

export interface VllmLeg {
  plan?: PdPlan;
  /** Prefill leg: kv_transfer_params_json of its GenerateComplete (json.dumps' spacing, as vLLM's servicer writes it). */
  returned?: string;
  /** ...and the legacy typed mirror the servicer sets beside it. */
  legacy?: { remoteHost: string; remotePort: number };
}

let blockCounter = 0;

export function vllmLeg(m: MockContext, req: GenerateRequest): VllmLeg {
  const params = paramsOf(req);
  if (!params || m.role === 'aggregated') return {};
  const id = req.requestId;
  if (m.role === 'prefill') {
    if (params['do_remote_prefill'] === true) {
      throw new ConnectError(`request ${id}: this worker is a KV producer (kv_role kv_producer) and cannot take a remote prefill (do_remote_prefill)`, Code.InvalidArgument);
    }
    if (params['do_remote_decode'] !== true) return {};
    // Mooncake (push-based): the router minted the transfer id; nothing is returned.
    const transferId = params['transfer_id'];
    if (typeof transferId === 'string' && transferId !== '') return { plan: { role: 'prefill', protocol: 'vllm', key: transferKey(transferId), answerAfterTaken: false } };
    const remoteId = `${id}-${Math.random().toString(16).slice(2, 10).padEnd(8, '0')}`;
    const promptLen = req.input.case === 'tokenized' ? req.input.value.inputIds.length : 0;
    const blocks = Math.ceil(promptLen / m.core.o.blockSize);
    const ids = Array.from({ length: blocks }, (_, i) => (blockCounter + i) % m.core.o.numBlocks);
    blockCounter = (blockCounter + blocks) % m.core.o.numBlocks;
    const host = m.rendezvousHost;
    const port = m.rendezvous!.port;
    // NIXL's request_finished() keys (vllm/distributed/kv_transfer/kv_connector/v1/nixl).
    const returned = pyJson({
      do_remote_prefill: true,
      do_remote_decode: false,
      remote_block_ids: [ids],
      remote_engine_id: m.kvEngineId,
      remote_request_id: remoteId,
      remote_host: host,
      remote_port: port,
      tp_size: 1,
      dcp_size: 1,
      pp_size: 1,
      remote_num_tokens: promptLen,
      remote_blocks_expiry_time: null,
      transfer_mode: 'pull',
    });
    return { plan: { role: 'prefill', protocol: 'vllm', key: requestKey(remoteId), answerAfterTaken: false }, returned, legacy: { remoteHost: host, remotePort: port } };
  }
  if (params['do_remote_decode'] === true) {
    throw new ConnectError(`request ${id}: this worker is a KV consumer (kv_role kv_consumer) and cannot hand KV to a remote decode (do_remote_decode)`, Code.InvalidArgument);
  }
  if (params['do_remote_prefill'] !== true) return {};
  const transferId = params['transfer_id'];
  if (typeof transferId === 'string' && transferId !== '') {
    // Mooncake: the prefill engine's bootstrap address and the router's transfer id.
    const at = bootstrapAddr(params['remote_bootstrap_addr']);
    if (!at) throw new ConnectError(`request ${id}: kv_transfer_params with a transfer_id need remote_bootstrap_addr (http://HOST:PORT)`, Code.InvalidArgument);
    return { plan: { role: 'decode', protocol: 'vllm', host: at.host, port: at.port, key: transferKey(transferId) } };
  }
  const host = params['remote_host'];
  const port = params['remote_port'];
  const remoteId = params['remote_request_id'];
  if (typeof host !== 'string' || host === '' || typeof port !== 'number' || !Number.isInteger(port) || port < 1 || port > 65535 || typeof remoteId !== 'string' || remoteId === '') {
    throw new ConnectError(`request ${id}: kv_transfer_params with do_remote_prefill need remote_host, remote_port (1-65535) and remote_request_id`, Code.InvalidArgument);
  }
  return { plan: { role: 'decode', protocol: 'vllm', host, port, key: requestKey(remoteId) } };
}

function bootstrapAddr(v: unknown): { host: string; port: number } | null {
  if (typeof v !== 'string') return null;
  try {
    const u = new URL(v);
    const port = Number(u.port);
    return u.hostname !== '' && Number.isInteger(port) && port > 0 ? { host: u.hostname, port } : null;
  } catch {
    return null;
  }
}

/** The request's params as vLLM's servicer reads them: the JSON field first, else the legacy typed one. */
function paramsOf(req: GenerateRequest): Record<string, unknown> | null {
  if (req.kvTransferParamsJson !== undefined) {
    let v: unknown;
    try {
      v = JSON.parse(req.kvTransferParamsJson);
    } catch (e) {
      throw new ConnectError(`Invalid kv_transfer_params_json: ${(e as Error).message}`, Code.InvalidArgument);
    }
    if (v === null || typeof v !== 'object' || Array.isArray(v)) throw new ConnectError('kv_transfer_params_json must be a JSON object', Code.InvalidArgument);
    return v as Record<string, unknown>;
  }
  const t = req.kvTransferParams;
  if (!t) return null;
  if (!t.remoteHost || t.remotePort < 1 || t.remotePort > 65535) {
    throw new ConnectError('Invalid kv_transfer_params: remote_host must be set and remote_port must be in [1, 65535].', Code.InvalidArgument);
  }
  return { remote_host: t.remoteHost, remote_port: t.remotePort };
}

/** JSON as Python's json.dumps writes it (", " and ": "). */
function pyJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(pyJson).join(', ')}]`;
  if (v !== null && typeof v === 'object') return `{${Object.entries(v).map(([k, x]) => `${JSON.stringify(k)}: ${pyJson(x)}`).join(', ')}}`;
  return JSON.stringify(v) ?? 'null';
}
