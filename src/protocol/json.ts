// Plain JSON value types, for the few request parts that must be reshaped as objects
// (Anthropic and Responses inputs); everything else stays byte spans.

export type Json = null | boolean | number | string | Json[] | { [k: string]: Json };
export type JsonObject = { [k: string]: Json };

export function isObject(v: Json | undefined): v is JsonObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
