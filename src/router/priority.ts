// agent_hints.priority in the engine's polarity. Portico's (and Dynamo's) priority is
// "higher = more important". SGLang's scheduler with --enable-priority-scheduling
// orders higher values first by default (unless --schedule-low-priority-values-first);
// vLLM's --scheduling-policy priority runs lower values first. Neither GenerateRequest
// in proto/ (SGLang scheduler, vLLM engine) has a priority field today, so the value
// is computed but not sent: when the engine protocol gains the field, pass
// enginePriority() there.

export type EngineProtocol = 'sglang' | 'vllm';

export function enginePriority(protocol: EngineProtocol, priority: number | undefined, sglangLowFirst = false): number | undefined {
  if (priority === undefined) return undefined;
  if (protocol === 'vllm') return -priority;
  return sglangLowFirst ? -priority : priority;
}
