// What the mock engine was asked to do: the last Generate requests it received, as
// protobuf JSON (field names as in the .proto), so tests can prove that a request
// field reached the engine with the right value. Requests are kept by reference and
// turned into JSON only when read, so recording costs nothing measurable.

export interface ReceivedRequest {
  requestId: string;
  /** 'sglang' or 'vllm': which proto the JSON follows. */
  protocol: 'sglang' | 'vllm';
  /** The LoRA adapter that served it (GenerateRequest.lora_id; '' for the base model). */
  loraId?: string;
  /** The W3C trace context sent with it (gRPC metadata traceparent / tracestate), if any. */
  traceparent?: string;
  tracestate?: string;
  /** GenerateRequest as proto JSON (`useProtoFieldName`: snake_case names). */
  json(): Record<string, unknown>;
}

const KEEP = 64;

export class ReceivedLog {
  private readonly ring: ReceivedRequest[] = [];
  private next = 0;

  record(r: ReceivedRequest): void {
    if (this.ring.length < KEEP) this.ring.push(r);
    else this.ring[this.next] = r;
    this.next = (this.next + 1) % KEEP;
  }

  /** Newest first. */
  all(): ReceivedRequest[] {
    const n = this.ring.length;
    const out: ReceivedRequest[] = [];
    for (let i = 1; i <= n; i++) out.push(this.ring[(this.next - i + n * 2) % n]);
    return out;
  }

  /** The newest request whose id starts with `prefix` (Portico may suffix ids per prompt). */
  find(prefix: string): ReceivedRequest | undefined {
    return this.all().find((r) => r.requestId.startsWith(prefix));
  }
}

/** The trace context metadata of a Generate call (what a real engine would parent its spans on). */
export function traceContextOf(ctx: { requestHeader?: { get(name: string): string | null } }): { traceparent?: string; tracestate?: string } {
  const h = ctx.requestHeader;
  if (!h) return {};
  const traceparent = h.get('traceparent') ?? undefined;
  const tracestate = h.get('tracestate') ?? undefined;
  return traceparent === undefined && tracestate === undefined ? {} : { traceparent, tracestate };
}
