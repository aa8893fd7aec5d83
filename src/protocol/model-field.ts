// The `model` field every OpenAI-style request carries: required, a non-blank string.

import { ApiError } from './errors.js';
import type { Fields } from './fields.js';

export function requireModel(f: Pick<Fields<'model'>, 'string'>): string {
  const model = f.string('model');
  if (model === undefined) throw ApiError.badRequest('`model` is required', 'model');
  if (model.trim() === '') throw ApiError.badRequest('`model` must not be blank', 'model');
  return model;
}
