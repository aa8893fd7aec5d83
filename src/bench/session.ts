// One conversation the load generator sends: its turns, synthetic (made to exact token
// lengths) or a dataset's OpenAI request lines sent as they are.

export type Turn =
  | { kind: 'synthetic'; system?: string; user: string; maxTokens: number }
  /** An OpenAI request line of a dataset, sent as it is (model and stream set by the run). */
  | { kind: 'raw'; body: Record<string, unknown> };

export interface Session {
  turns: Turn[];
}
