// Router failures a client can see. Each carries `apiStatus` (ApiError.from maps it);
// queue rejections also carry `retryAfter` (seconds) for the Retry-After header.

export class QueueRejectedError extends Error {
  readonly code: string;
  constructor(
    readonly apiStatus: number,
    readonly retryAfter: number,
    why: 'full' | 'timeout',
    detail: string,
  ) {
    super(why === 'full' ? `every worker is busy and the router queue is full (${detail}); retry later` : `the request waited ${detail} in the router queue without a free worker; retry later`);
    this.code = why === 'full' ? 'router_queue_full' : 'router_queue_timeout';
  }
}

export class DirectRouteError extends Error {
  readonly apiStatus = 400;
  readonly code = 'worker_id_required';
  constructor() {
    super('the router is in direct mode: name a worker with nvext.backend_instance_id or the x-dynamo-worker-instance-id header');
  }
}

export class DpRankError extends Error {
  readonly apiStatus = 400;
  readonly code = 'invalid_dp_rank';
  constructor(rank: number, worker: number, ranks: number) {
    super(`dp_rank ${rank} is out of range: worker ${worker} has ${ranks} data-parallel rank${ranks === 1 ? '' : 's'} (0 to ${ranks - 1})`);
  }
}
