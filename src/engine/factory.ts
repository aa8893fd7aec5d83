// One entry point that turns a worker URL into the right EngineClient.
//
//   grpc://host:port, grpcs://…, sglang+grpc://…   SGLang scheduler protocol
//   vllm+grpc://host:port, vllm+grpcs://…          vLLM engine protocol

import { EngineError } from './errors.js';
import type { EngineClientOptions } from './grpc-connection.js';
import { SglangEngineClient } from './sglang-client.js';
import type { EngineClient } from './types.js';
import { VllmEngineClient } from './vllm-client.js';

export type EngineProtocol = 'sglang' | 'vllm';

export type { EngineClientOptions };

/** Which protocol a worker URL asks for; throws EngineError for unknown schemes. */
export function protocolOf(url: string): EngineProtocol {
  const m = /^([a-z][a-z0-9+.-]*):\/\//i.exec(url);
  const scheme = m?.[1]?.toLowerCase();
  switch (scheme) {
    case 'grpc':
    case 'grpcs':
    case 'http':
    case 'https':
    case 'sglang+grpc':
    case 'sglang+grpcs':
      return 'sglang';
    case 'vllm+grpc':
    case 'vllm+grpcs':
      return 'vllm';
    default:
      throw new EngineError(
        'invalid_argument',
        `engine worker URL ${JSON.stringify(url)} must start with grpc:// (SGLang) or vllm+grpc:// (vLLM)`,
        url,
      );
  }
}

export function createEngineClient(url: string, opts?: EngineClientOptions): EngineClient {
  return protocolOf(url) === 'vllm' ? new VllmEngineClient(url, opts) : new SglangEngineClient(url, opts);
}
