// An example custom chat processor (Portico spec 002): what the native path does, written
// as a processor. It renders the model's chat template with the card's tokenizer, sends
// the token ids through Portico's router (routedEngine), detokenizes what comes back and
// yields OpenAI chat completion chunks. Portico serves them on /v1/chat/completions,
// /v1/responses and /v1/messages.
//
// Options (--chat-processor-config): {"system_prompt": "...", "max_tokens_limit": N}
//   system_prompt     prepended as a system message when the request has none
//   max_tokens_limit  requests asking for more output tokens are refused (InvalidArgument, a 400)

import { InvalidArgument } from 'portico';

/**
 * The provider: called once at startup with the frontend's configuration (`config`: the
 * resolved `portico serve` options by flag name, secrets left out) and this processor's
 * options (`options`: the --chat-processor-config object, {} when unset).
 */
export function provider(config, options) {
  const systemPrompt = typeof options.system_prompt === 'string' ? options.system_prompt : null;
  const limit = Number.isInteger(options.max_tokens_limit) ? options.max_tokens_limit : null;

  /** The factory: called per model when its first worker registers, and when its card changes. */
  return function chatEngineFactory(instanceId, modelCard, routedEngine) {
    const tok = modelCard.tokenizer;
    return {
      async *generate(request, context) {
        const maxTokens = request.max_completion_tokens ?? request.max_tokens;
        if (limit !== null && maxTokens !== undefined && maxTokens > limit) {
          throw new InvalidArgument(`max_tokens ${maxTokens} is above this server's limit of ${limit}`);
        }
        let messages = request.messages;
        if (systemPrompt !== null && !messages.some((m) => m.role === 'system')) messages = [{ role: 'system', content: systemPrompt }, ...messages];
        const tokenIds = tok.applyChatTemplate(messages, { tools: request.tools ?? null });

        const stream = routedEngine.generate(
          { tokenIds, maxTokens, temperature: request.temperature, topP: request.top_p, seed: request.seed },
          context,
        );
        const id = `chatcmpl-${context.id}`;
        const created = Math.floor(Date.now() / 1000);
        const chunk = (delta, finish = null, usage = undefined) => ({
          id, object: 'chat.completion.chunk', created, model: request.model,
          choices: [{ index: 0, delta, finish_reason: finish }],
          ...(usage ? { usage } : {}),
        });

        const detok = tok.detokenizer(true);
        const eos = new Set(tok.eosTokenIds);
        yield chunk({ role: 'assistant', content: '' });
        let usage = null;
        for await (const out of stream) {
          // The model's EOS ends the answer (its text hidden), whether or not the engine stops there.
          const cut = out.tokenIds.findIndex((t) => eos.has(t));
          const ids = cut < 0 ? out.tokenIds : out.tokenIds.slice(0, cut);
          const text = detok.push(ids);
          if (text) yield chunk({ content: text });
          const completion = out.completionTokens - (out.tokenIds.length - ids.length) + (cut < 0 ? 0 : 1);
          usage = { prompt_tokens: out.promptTokens, completion_tokens: completion, total_tokens: out.promptTokens + completion };
          const finish = cut >= 0 ? 'stop' : out.finishReason;
          if (finish !== null) {
            const rest = detok.finish();
            if (rest) yield chunk({ content: rest });
            yield chunk({}, finish === 'abort' ? 'stop' : finish);
            break; // leaving the loop ends the worker's request
          }
        }
        if (usage) yield { id, object: 'chat.completion.chunk', created, model: request.model, choices: [], usage };
      },
    };
  };
}
