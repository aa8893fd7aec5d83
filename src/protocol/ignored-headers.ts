// Prefill routing headers (`x-dynamo-prefill-instance-id`, the prefill dp-rank headers and
// their aliases) on a deployment without prefill workers: gateways and EPPs set them on
// every request, so they are ignored rather than refused, and counted here; /metrics
// reports the counts as `<prefix>ignored_routing_headers_total{header}`. The nvext body
// fields (`prefill_worker_id`, `prefill_dp_rank`) are still refused with a clear 400:
// a client that wrote them asked for something this server cannot do.

const counts = new Map<string, number>();

export function countIgnoredHeader(name: string): void {
  counts.set(name, (counts.get(name) ?? 0) + 1);
}

/** Header name -> times it was ignored, since start. */
export function ignoredHeaderCounts(): ReadonlyMap<string, number> {
  return counts;
}
