// JSON text of the short strings an answer is made of (ids, model names, finish reasons, a
// token's text, for the chat, completion and Responses writers): written as is when no
// character needs escaping, else by JSON.stringify.
// Each JSON.stringify call enters V8's C++ runtime; the seven of a unary chat answer were
// ~1 % of a lone request's CPU in a 100 req/s profile, and a streamed token paid one more.
// The output is byte for byte what JSON.stringify gives (test/json-text.test.ts).

/** Longer strings go straight to JSON.stringify: its scan is faster than this loop's. */
const MAX_SCAN = 256;

export function jsonString(s: string): string {
  if (s.length > MAX_SCAN) return JSON.stringify(s);
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    // Control characters, '"', '\\' and everything past ASCII (lone surrogates are escaped) take the slow path.
    if (c < 0x20 || c === 0x22 || c === 0x5c || c > 0x7e) return JSON.stringify(s);
  }
  return `"${s}"`;
}
