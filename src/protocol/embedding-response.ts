// The embeddings response: {object:"list", data:[{object:"embedding", index,
// embedding}], model, usage:{prompt_tokens, total_tokens}}. With encoding_format
// base64, each embedding is the base64 of its float32 values in little-endian byte
// order (what the openai SDKs decode by default); otherwise a JSON array of numbers.

/** The float32 values as little-endian bytes, base64-encoded. */
export function base64Float32(v: Float32Array): string {
  const buf = Buffer.allocUnsafe(v.length * 4);
  for (let i = 0; i < v.length; i++) buf.writeFloatLE(v[i]!, i * 4);
  return buf.toString('base64');
}

/**
 * Keep the first `dims` values and scale them back to unit length (Matryoshka
 * truncation). The caller has checked dims ≤ v.length.
 */
export function truncateNormalised(v: Float32Array, dims: number): Float32Array {
  const out = v.slice(0, dims);
  let norm = 0;
  for (let i = 0; i < dims; i++) norm += out[i]! * out[i]!;
  if (norm > 0) {
    const k = 1 / Math.sqrt(norm);
    for (let i = 0; i < dims; i++) out[i] = out[i]! * k;
  }
  return out;
}

export function embeddingList(model: string, vectors: Float32Array[], format: 'float' | 'base64', promptTokens: number): string {
  const data = vectors.map((v, index) => {
    const embedding = format === 'base64' ? JSON.stringify(base64Float32(v)) : `[${Array.prototype.join.call(v, ',')}]`;
    return `{"object":"embedding","index":${index},"embedding":${embedding}}`;
  });
  return `{"object":"list","data":[${data.join(',')}],"model":${JSON.stringify(model)},"usage":{"prompt_tokens":${promptTokens},"total_tokens":${promptTokens}}}`;
}
