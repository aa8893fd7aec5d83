// What each engine protocol needs on the two legs of a disaggregated request, as their own
// routers drive them (SGLang's gateway smg; Dynamo does the same per protocol).
//
// SGLang (a bootstrap rendezvous): the same request goes to the prefill and the decode
// worker at once, both carrying DisaggregatedParams {host, port, room}: host and port name
// the prefill worker's bootstrap server, the room is fresh per request. The decode worker
// fetches the prompt's KV there by room; the client's stream is read from decode.
//
// vLLM (a KV connector hand-off): the prefill leg goes first with max_tokens 1, n 1, no
// streaming, and kv_transfer_params asking for a remote decode; the decode leg follows with
// what the prefill leg's completion returned. Per connector (GetServerInfo kv_connector):
//   NixlConnector       prefill {"do_remote_decode":true,"do_remote_prefill":false}; the
//                       returned params are relayed to decode as they are.
//   MooncakeConnector   push-based: the router mints a transfer id, tags the prefill leg with
//                       it, and gives decode the prefill engine's id and bootstrap address.
//   anything else       nothing added to prefill; returned params (if any) are relayed.
// A request with n > 1 is not handed off (each decode choice would pull the same single-use
// KV): the decode worker computes the prompt itself.

import { randomInt, randomUUID } from 'node:crypto';

import { protocolOf } from './factory.js';
import type { EngineDisaggregation, EngineMultimodal, GenerateParams } from './types.js';

/** How the two legs meet: 'bootstrap' (SGLang, both at once) or 'relay' (vLLM, prefill first). */
export type PdHandoff = 'bootstrap' | 'relay';

/** SGLang's default --disaggregation-bootstrap-port. */
export const DEFAULT_BOOTSTRAP_PORT = 8998;

export function pdHandoffOf(decodeUrl: string): PdHandoff {
  return protocolOf(decodeUrl) === 'vllm' ? 'relay' : 'bootstrap';
}

/** The prefill worker as the hand-off needs it. */
export interface PrefillSide {
  url: string;
  engine: EngineDisaggregation | null;
  /** Its bootstrap port when its engine does not say (--disagg-bootstrap-port). */
  bootstrapPort: number;
  /** The rank the prefill leg is pinned to, if any. */
  dpRank?: number;
}

/** The host of a worker URL (brackets kept for IPv6), as the bootstrap address. */
export function hostOf(url: string): string {
  const m = /^[a-z][a-z0-9+.-]*:\/\/(\[[^\]]+\]|[^:/]+)/i.exec(url);
  return m ? m[1]! : '';
}

/** Both legs of an SGLang request: the same params with one fresh room. */
export function bootstrapLegs(params: GenerateParams, prefill: PrefillSide): { prefill: GenerateParams; decode: GenerateParams } {
  const bootstrap = {
    host: hostOf(prefill.url),
    port: prefill.engine?.bootstrapPort ?? prefill.bootstrapPort,
    room: randomInt(0, 2 ** 31 - 1),
  };
  return {
    prefill: { ...params, bootstrap, dataParallelRank: prefill.dpRank },
    decode: { ...params, bootstrap },
  };
}

/** The vLLM hand-off of one request: the prefill leg's params, and how decode's follow from its answer. */
export interface RelayPlan {
  prefill: GenerateParams;
  /** The decode leg's params, given what the prefill leg's completion returned (kv_transfer_params_json). */
  decode(returned: string | undefined): GenerateParams;
  /** The connector family, for logs and metrics: nixl, mooncake or passthrough. */
  connector: 'nixl' | 'mooncake' | 'passthrough';
}

const NIXL_PREFILL = '{"do_remote_decode":true,"do_remote_prefill":false}';

export function relayPlan(params: GenerateParams, prefill: PrefillSide): RelayPlan {
  const single = (params.n ?? 1) <= 1;
  const kind = prefill.engine?.kvConnector ?? '';
  const connector = kind === 'NixlConnector' ? 'nixl' : kind === 'MooncakeConnector' ? 'mooncake' : 'passthrough';
  const prefillParams: GenerateParams = {
    ...params,
    maxNewTokens: 1,
    minNewTokens: undefined,
    n: 1,
    stream: false,
    logprobs: false,
    topLogprobs: undefined,
    promptLogprobs: undefined,
    dataParallelRank: prefill.dpRank,
    kvTransferParams: undefined,
  };
  let decodeFixed: string | undefined;
  if (single && connector === 'nixl') prefillParams.kvTransferParams = NIXL_PREFILL;
  if (single && connector === 'mooncake') {
    // With several DP ranks the engine cores suffix their id with the rank: a hand-off needs a pinned rank.
    const base = prefill.engine?.kvEngineId ?? '';
    const engineId = base === '' ? '' : (prefill.engine?.dataParallelSize ?? 1) > 1 ? (prefill.dpRank === undefined ? '' : `${base}_dp${prefill.dpRank}`) : base;
    if (engineId !== '') {
      const transferId = `xfer-${randomUUID()}`;
      prefillParams.kvTransferParams = JSON.stringify({ do_remote_decode: true, do_remote_prefill: false, transfer_id: transferId });
      decodeFixed = JSON.stringify({
        do_remote_decode: false,
        do_remote_prefill: true,
        transfer_id: transferId,
        remote_engine_id: engineId,
        remote_bootstrap_addr: `http://${hostOf(prefill.url)}:${prefill.engine?.bootstrapPort ?? prefill.bootstrapPort}`,
      });
    }
  }
  return {
    prefill: prefillParams,
    connector,
    decode(returned) {
      const relayed = decodeFixed ?? (single ? returned : undefined);
      if (relayed === undefined) return params;
      // The KV comes from the prefill worker: an image's pixels are not sent again.
      return params.multimodal ? { ...params, kvTransferParams: relayed, multimodal: gridOnly(params.multimodal) } : { ...params, kvTransferParams: relayed };
    },
  };
}

/**
 * The images of a decode leg that receives the prompt's KV: no pixel tensor, the rest kept
 * (Qwen-VL's grids give the decode worker its M-RoPE positions; ranges and hashes key its
 * prefix cache). A CLIP-style image has no other tensor: only its identity goes.
 */
export function gridOnly(m: EngineMultimodal): EngineMultimodal {
  return {
    ...m,
    pixelValues: null,
    batchedKeys: m.batchedKeys.filter((k) => k !== 'pixel_values'),
    flatKeys: m.flatKeys.filter(([k]) => k !== 'pixel_values'),
  };
}
