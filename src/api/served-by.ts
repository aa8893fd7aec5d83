// Which workers served a generation, as nvext.extra_fields ["worker_id"] reports them: the
// decode (or only) worker and its rank, and in disaggregated serving the prefill worker too.

import type { RunningGeneration } from '../pipeline/run.js';
import type { NvExt } from '../protocol/nvext.js';
import type { ServedBy } from '../protocol/nvext-response.js';

export function servedBy(g: RunningGeneration, nv: NvExt): ServedBy {
  const p = g.prefill;
  const by: ServedBy = { workerId: g.worker.id, dpRank: g.dpRank ?? nv.dpRank };
  if (p) {
    by.prefillWorkerId = p.worker.id;
    by.prefillDpRank = p.dpRank ?? nv.prefillDpRank;
  }
  return by;
}
