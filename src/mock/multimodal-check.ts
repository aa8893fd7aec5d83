// What the mock engine checks of a request's preprocessed images (MultimodalInputs on
// either protocol), so a wrong wire fails a test instead of passing silently: tensor
// byte lengths against shapes and dtypes, placeholder ranges against the prompt ids
// (in order, inside the prompt, all the image token, and no image token outside them),
// and the per-image tensors against the ranges — for Qwen-VL, image_grid_thw rows,
// patch counts and each range's length (grid_t·grid_h·grid_w / merge², merge 2); for
// CLIP-style models, one [3, H, W] image per range.

export interface ReceivedTensor {
  data: Uint8Array;
  shape: number[];
  dtype: string;
}

/** MultimodalInputs of either protocol, reduced to what is checked. */
export interface ReceivedMultimodal {
  pixelValues: ReceivedTensor | undefined;
  tensors: Record<string, ReceivedTensor>;
  imTokenId: number | undefined;
  placeholders: { offset: number; length: number }[];
  /** vLLM only: content hashes, and the field layout. */
  hashes?: string[];
  batchedKeys?: string[];
  flatKeys?: Record<string, string>;
}

const DTYPE_BYTES: Record<string, number> = { float32: 4, int64: 8, uint32: 4 };
/** Qwen-VL's spatial merge (every published config uses 2). */
const MERGE = 2;

function tensorProblem(name: string, t: ReceivedTensor): string | null {
  const size = DTYPE_BYTES[t.dtype];
  if (size === undefined) return `${name}: dtype ${JSON.stringify(t.dtype)} is not float32, int64 or uint32`;
  const n = t.shape.reduce((a, b) => a * b, 1);
  if (t.shape.length === 0 || t.data.length !== n * size) return `${name}: ${t.data.length} bytes for shape [${t.shape}] of ${t.dtype}`;
  return null;
}

function int64s(t: ReceivedTensor): number[] {
  const v = new DataView(t.data.buffer, t.data.byteOffset, t.data.byteLength);
  return Array.from({ length: t.data.length / 8 }, (_, i) => Number(v.getBigInt64(i * 8, true)));
}

/**
 * The first thing wrong with `mm` for a prompt of `prompt` ids, or null. `gridOnly`: the
 * decode leg of a KV hand-off, whose images come without pixel_values (and must).
 */
export function multimodalProblem(prompt: ArrayLike<number>, mm: ReceivedMultimodal, gridOnly = false): string | null {
  const px = mm.pixelValues;
  if (gridOnly) {
    if (px) return 'pixel_values on the decode leg of a KV hand-off (the prompt\'s KV comes from the prefill worker)';
  } else {
    if (!px) return 'mm_inputs without pixel_values';
    if (px.dtype !== 'float32') return `pixel_values: dtype ${px.dtype}, want float32`;
  }
  const bad = (px ? tensorProblem('pixel_values', px) : null) ?? Object.entries(mm.tensors).map(([k, t]) => tensorProblem(k, t)).find((e) => e !== null);
  if (bad) return bad;
  if (mm.imTokenId === undefined) return 'mm_inputs without im_token_id';
  const ph = mm.placeholders;
  if (ph.length === 0) return 'mm_inputs without mm_placeholders';
  let end = 0;
  let covered = 0;
  for (const [i, p] of ph.entries()) {
    if (p.length === 0 || p.offset < end || p.offset + p.length > prompt.length) return `mm_placeholders[${i}] {offset ${p.offset}, length ${p.length}} overlaps, is empty or leaves the ${prompt.length}-token prompt`;
    for (let j = p.offset; j < p.offset + p.length; j++) {
      if (prompt[j] !== mm.imTokenId) return `mm_placeholders[${i}]: prompt[${j}] is ${prompt[j]}, not the image token ${mm.imTokenId}`;
    }
    end = p.offset + p.length;
    covered += p.length;
  }
  let imageTokens = 0;
  for (let j = 0; j < prompt.length; j++) if (prompt[j] === mm.imTokenId) imageTokens++;
  if (imageTokens !== covered) return `the prompt has ${imageTokens} image tokens, the placeholders cover ${covered}`;

  const grid = mm.tensors['image_grid_thw'];
  if (grid) {
    if (grid.dtype !== 'int64' || grid.shape.length !== 2 || grid.shape[0] !== ph.length || grid.shape[1] !== 3) return `image_grid_thw: shape [${grid.shape}] ${grid.dtype}, want [${ph.length}, 3] int64`;
    const g = int64s(grid);
    let patches = 0;
    for (let i = 0; i < ph.length; i++) {
      const n = g[i * 3]! * g[i * 3 + 1]! * g[i * 3 + 2]!;
      patches += n;
      if (ph[i]!.length * MERGE * MERGE !== n) return `image ${i}: grid ${g.slice(i * 3, i * 3 + 3)} makes ${n / (MERGE * MERGE)} tokens, its placeholder has ${ph[i]!.length}`;
    }
    if (px && (px.shape.length !== 2 || px.shape[0] !== patches)) return `pixel_values: shape [${px.shape}], the grids make ${patches} patches`;
    const sizes = mm.tensors['patches_per_image'];
    if (sizes && int64s(sizes).join() !== Array.from({ length: ph.length }, (_, i) => g[i * 3]! * g[i * 3 + 1]! * g[i * 3 + 2]!).join()) return 'patches_per_image does not match image_grid_thw';
  } else if (px && (px.shape.length !== 4 || px.shape[0] !== ph.length || px.shape[1] !== 3)) {
    return `pixel_values: shape [${px.shape}], want [${ph.length}, 3, H, W] for ${ph.length} images`;
  }

  if (mm.hashes !== undefined) {
    if (mm.hashes.length !== ph.length || mm.hashes.some((h) => h === '')) return `${mm.hashes.length} mm_hashes for ${ph.length} images`;
    for (const [k, sizesKey] of Object.entries(mm.flatKeys ?? {})) {
      if ((k !== 'pixel_values' || !px) && !mm.tensors[k]) return `flat_keys names ${k}, which was not sent`;
      if (!mm.tensors[sizesKey]) return `flat_keys sizes ${k} by ${sizesKey}, which was not sent`;
    }
    for (const k of mm.batchedKeys ?? []) if ((k !== 'pixel_values' || !px) && !mm.tensors[k]) return `batched_keys names ${k}, which was not sent`;
  }
  return null;
}
