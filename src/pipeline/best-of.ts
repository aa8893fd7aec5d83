// best_of: of the `bestOf` candidates generated for each prompt, keep the `n` with the
// highest cumulative log-probability (the sum of their tokens' logprobs), best first, as
// vLLM's V0 engine ranked them. Candidates are indexed prompt-major (prompt i, candidate
// j → i * bestOf + j); the kept ones are re-indexed i * n + rank.

export interface Candidate {
  index: number;
  cumulativeLogprob: number;
}

export function selectBest<C extends Candidate>(candidates: C[], bestOf: number, n: number): C[] {
  const out: C[] = [];
  for (let p = 0; p * bestOf < candidates.length; p++) {
    const group = candidates.slice(p * bestOf, (p + 1) * bestOf);
    // Stable: equal sums keep generation order.
    group.sort((a, b) => b.cumulativeLogprob - a.cumulativeLogprob);
    group.slice(0, n).forEach((c, rank) => out.push({ ...c, index: p * n + rank }));
  }
  return out;
}
