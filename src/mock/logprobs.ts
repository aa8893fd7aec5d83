// Deterministic log-probabilities for the mock engine: a token's logprob is derived from
// its id alone, and the top-k alternatives at a position are the sampled token followed by
// the next ids, each less likely than the one before. Tests can recompute every value.

/** log-probability the mock reports for sampling `id`: in [-9.9, -0.1]. */
export function mockLogprob(id: number): number {
  return -((id % 99) + 1) / 10;
}

export interface MockOutputLogprobs {
  tokenLogprobs: number[];
  tokenIds: number[];
  topLogprobs: Array<{ values: number[]; tokenIds: number[] }>;
}

/** Logprobs for `ids` with `top` alternatives per position (0 = none). */
export function mockOutputLogprobs(ids: readonly number[], top: number, vocabSize: number): MockOutputLogprobs {
  const out: MockOutputLogprobs = { tokenLogprobs: [], tokenIds: [...ids], topLogprobs: [] };
  for (const id of ids) {
    const lp = mockLogprob(id);
    out.tokenLogprobs.push(lp);
    if (top > 0) {
      const alt = { values: [] as number[], tokenIds: [] as number[] };
      for (let j = 0; j < top; j++) {
        alt.tokenIds.push((id + j) % vocabSize);
        alt.values.push(lp - j * 0.5);
      }
      out.topLogprobs.push(alt);
    }
  }
  return out;
}

export interface MockInputLogprobs {
  tokenLogprobs: Array<{ value?: number }>;
  tokenIds: number[];
  topLogprobs: Array<{ values: number[]; tokenIds: number[] }>;
}

/** Prompt logprobs by the same rule; the first prompt token has none (nothing precedes it). */
export function mockInputLogprobs(prompt: ArrayLike<number>, top: number, vocabSize: number): MockInputLogprobs {
  const ids = Array.from(prompt);
  const out = mockOutputLogprobs(ids, top, vocabSize);
  return {
    tokenLogprobs: out.tokenLogprobs.map((value, i) => (i === 0 ? {} : { value })),
    tokenIds: ids,
    topLogprobs: top > 0 ? out.topLogprobs.map((t, i) => (i === 0 ? { values: [], tokenIds: [] } : t)) : [],
  };
}
