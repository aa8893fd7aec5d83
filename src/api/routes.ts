// The route table: every endpoint Portico serves, in one place.

import { addWorker, listWorkers, removeWorker } from './admin.js';
import { getBusyThresholds, setBusyThresholds } from './busy-threshold.js';
import { chatCompletions } from './chat.js';
import { completions } from './completions.js';
import { embeddings } from './embeddings.js';
import { health, live } from './health.js';
import { getModel, listModels } from './models.js';
import { loadLoraAdapter, unloadLoraAdapter } from './lora.js';
import { metrics } from './metrics.js';
import { responses } from './responses.js';
import { deleteResponse, listInputItems, retrieveResponse } from './responses-retrieve.js';
import { countTokens, messages } from './messages.js';
import { parseFunctionCall, parseReasoning } from './parse.js';
import { detokenize, tokenize } from './tokenize.js';
import type { AppContext } from './context.js';
import type { Route } from './exchange.js';

export function routes(ctx: AppContext): Route[] {
  return [
    { method: 'post', path: '/v1/chat/completions', handler: chatCompletions(ctx), generation: true },
    { method: 'post', path: '/v1/completions', handler: completions(ctx), generation: true },
    { method: 'post', path: '/v1/responses', handler: responses(ctx), generation: true },
    { method: 'get', path: '/v1/responses/:id', handler: retrieveResponse(ctx) },
    { method: 'delete', path: '/v1/responses/:id', handler: deleteResponse(ctx) },
    { method: 'get', path: '/v1/responses/:id/input_items', handler: listInputItems(ctx) },
    { method: 'post', path: '/v1/embeddings', handler: embeddings(ctx), generation: true },
    { method: 'post', path: '/v1/messages', handler: messages(ctx), errors: 'anthropic', generation: true },
    { method: 'post', path: '/v1/messages/count_tokens', handler: countTokens(ctx), errors: 'anthropic' },
    { method: 'post', path: '/tokenize', handler: tokenize(ctx) },
    { method: 'post', path: '/detokenize', handler: detokenize(ctx) },
    { method: 'post', path: '/parse/function_call', handler: parseFunctionCall(ctx) },
    { method: 'post', path: '/parse/reasoning', handler: parseReasoning(ctx) },
    { method: 'get', path: '/v1/models', handler: listModels(ctx) },
    { method: 'get', path: '/v1/models/:id', handler: getModel(ctx) },
    { method: 'post', path: '/v1/load_lora_adapter', handler: loadLoraAdapter(ctx), admin: true },
    { method: 'post', path: '/v1/unload_lora_adapter', handler: unloadLoraAdapter(ctx), admin: true },
    { method: 'get', path: '/admin/workers', handler: listWorkers(ctx), admin: true },
    { method: 'post', path: '/admin/workers', handler: addWorker(ctx), admin: true },
    { method: 'delete', path: '/admin/workers/:id', handler: removeWorker(ctx), admin: true },
    { method: 'get', path: '/busy_threshold', handler: getBusyThresholds(ctx), admin: true },
    { method: 'post', path: '/busy_threshold', handler: setBusyThresholds(ctx), admin: true },
    { method: 'get', path: '/health', handler: health(ctx), public: true },
    { method: 'get', path: '/live', handler: live, public: true },
    { method: 'get', path: '/metrics', handler: metrics(ctx), public: true, metrics: true },
  ];
}
