// What every endpoint handler can reach: the served models and the frontend options.

import { ApiError } from '../protocol/errors.js';
import type { ServedModel } from '../pipeline/served-model.js';
import type { FrontendMetrics } from '../metrics/frontend.js';

export interface Lifecycle {
  /** Set on SIGTERM/SIGINT: health answers 503 shutting_down while in-flight work drains. */
  draining: boolean;
}

export interface AppContext {
  readonly models: ReadonlyMap<string, ServedModel>;
  readonly ignoreUnsupportedFields: boolean;
  readonly lifecycle: Lifecycle;
  readonly metrics: FrontendMetrics;
}

export function modelFor(ctx: AppContext, name: string): ServedModel {
  const m = ctx.models.get(name);
  if (m) return m;
  throw new ApiError(404, `The model \`${name}\` does not exist.`, { type: 'invalid_request_error', param: 'model', code: 'model_not_found' });
}
