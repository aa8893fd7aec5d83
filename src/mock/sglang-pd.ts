// Which leg of a disaggregated request an SGLang Generate is on the mock engine, from the
// worker's role and the request's disaggregated_params (field 10: bootstrap_host,
// bootstrap_port, bootstrap_room). SGLang's router sends the same request, with one room, to
// a prefill and a decode worker at once; the decode worker takes the prompt's KV from the
// prefill worker's bootstrap server by room.

import { Code, ConnectError } from '@connectrpc/connect';

import type { GenerateRequest } from '../gen/sglang_scheduler_pb.js';
import { roomKey } from './kv-rendezvous.js';
import type { MockContext } from './mock-context.js';
import type { PdPlan } from './pd-leg.js';

/**
 * undefined: an ordinary request (an aggregated worker ignores disaggregated_params, as
 * SGLang does with disaggregation_mode "null"). A prefill or decode worker refuses a request
 * without them (INVALID_ARGUMENT): it has no way to hand over or receive the KV.
 */
export function sglangPlan(m: MockContext, req: GenerateRequest): PdPlan | undefined {
  if (m.role === 'aggregated') return undefined;
  const d = req.disaggregatedParams;
  if (!d) {
    throw new ConnectError(
      `request ${req.requestId}: this worker runs disaggregation_mode=${m.role} and needs disaggregated_params (bootstrap_host, bootstrap_port, bootstrap_room); send it through a prefill/decode router`,
      Code.InvalidArgument,
    );
  }
  const room = d.bootstrapRoom;
  if (m.role === 'prefill') return { role: 'prefill', protocol: 'sglang', key: roomKey(room), answerAfterTaken: true, room };
  return { role: 'decode', protocol: 'sglang', host: d.bootstrapHost, port: d.bootstrapPort, key: roomKey(room), room };
}
