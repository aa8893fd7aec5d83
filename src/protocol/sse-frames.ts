// The fixed frames of the OpenAI event streams, below both the stream writer (api/sse.ts)
// and the HTTP error writer (http/error-response.ts), which end a stream the same way.

/** The end of an OpenAI chat or completions stream. */
export const SSE_DONE = 'data: [DONE]\n\n';
