// GenerateResponse bytes → WireResponse, read by hand for the h2 transport.
// protobuf-es's fromBinary builds every message reflectively (and every
// field Portico never reads: hidden states, request ids, spec counters);
// this reader fills only the fields generate-stream.ts reads. Both protocols
// share the message shapes and differ in field numbers (proto/*.proto), so
// one reader takes a field-number layout. test/engine-wire.test.ts checks it
// against fromBinary over chunks and completes with every read field.

import type { WireChunk, WireComplete, WireInputLogprobs, WireLogprobs, WireResponse } from './generate-stream.js';

/** Field numbers that differ between the two protocols. */
export interface ResponseLayout {
  /** GenerateResponse.chunk / .complete */
  chunk: number;
  complete: number;
  /** GenerateStreamChunk.input_logprobs / .index */
  chunkInputLogprobs: number;
  chunkIndex: number;
  /** GenerateComplete.index / .matched_token_id / .matched_stop_str */
  completeIndex: number;
  matchedTokenId: number;
  matchedStopStr: number;
  /** GenerateComplete.kv_transfer_params_json / .kv_transfer_params (legacy); 0: the protocol has none. */
  kvTransferParamsJson: number;
  kvTransferParams: number;
}

/** proto/sglang_scheduler.proto */
export const SGLANG_RESPONSE: ResponseLayout = {
  chunk: 2, complete: 3, chunkInputLogprobs: 7, chunkIndex: 8, completeIndex: 11, matchedTokenId: 8, matchedStopStr: 9,
  kvTransferParamsJson: 0, kvTransferParams: 0,
};

/** proto/vllm_engine.proto */
export const VLLM_RESPONSE: ResponseLayout = {
  chunk: 1, complete: 2, chunkInputLogprobs: 6, chunkIndex: 7, completeIndex: 8, matchedTokenId: 10, matchedStopStr: 11,
  kvTransferParamsJson: 12, kvTransferParams: 9,
};

/** Reads one field's value into `into` (or skips it); the tag is already read. */
type Visit<T> = (r: Reader, into: T, field: number, wire: number) => void;

class Reader {
  constructor(
    public b: Uint8Array,
    public layout: ResponseLayout,
    public pos: number,
    public end: number,
  ) {}

  varint(): number {
    if (this.pos >= this.end) throw new Error('premature end of varint');
    const b = this.b;
    let x = b[this.pos++]!;
    if (x < 0x80) return x;
    x &= 0x7f;
    let shift = 7;
    for (;;) {
      if (this.pos >= this.end) throw new Error('premature end of varint');
      const c = b[this.pos++]!;
      if (shift < 28) x |= (c & 0x7f) << shift;
      else if (shift === 28) x = (x | ((c & 0x0f) << 28)) >>> 0;
      // Bits past 32 are dropped (uint32 fields), as protobuf-es does.
      if (c < 0x80) return x >>> 0;
      shift += 7;
      if (shift > 63) throw new Error('invalid varint');
    }
  }

  float(): number {
    if (this.pos + 4 > this.end) throw new Error('premature end of float');
    const b = this.b;
    u8[0] = b[this.pos]!;
    u8[1] = b[this.pos + 1]!;
    u8[2] = b[this.pos + 2]!;
    u8[3] = b[this.pos + 3]!;
    this.pos += 4;
    return f32[0]!;
  }

  /** The end of a length-delimited field's body (pos at its start). */
  lenEnd(): number {
    const len = this.varint();
    const e = this.pos + len;
    if (e > this.end) throw new Error('premature end of length-delimited field');
    return e;
  }

  string(): string {
    const e = this.lenEnd();
    const s = decoder.decode(this.b.subarray(this.pos, e));
    this.pos = e;
    return s;
  }

  skip(wire: number): void {
    switch (wire) {
      case 0:
        this.varint();
        break;
      case 1:
        this.pos += 8;
        break;
      case 2:
        this.pos = this.lenEnd();
        break;
      case 5:
        this.pos += 4;
        break;
      default:
        throw new Error(`cannot skip wire type ${wire}`);
    }
    if (this.pos > this.end) throw new Error('premature end of field');
  }

  /** A repeated uint32, packed (wire 2) or one element (wire 0), appended to `out`. */
  uint32s(wire: number, out: number[]): void {
    if (wire === 0) {
      out.push(this.varint());
      return;
    }
    const e = this.lenEnd();
    while (this.pos < e) out.push(this.varint());
    if (this.pos !== e) throw new Error('packed field overran its length');
  }

  /** A repeated float, packed (wire 2) or one element (wire 5), appended to `out`. */
  floats(wire: number, out: number[]): void {
    if (wire === 5) {
      out.push(this.float());
      return;
    }
    const e = this.lenEnd();
    while (this.pos < e) out.push(this.float());
    if (this.pos !== e) throw new Error('packed field overran its length');
  }

  /** Each field up to `end`, handed to `visit` with `into`; returns `into`. */
  fields<T>(into: T, visit: Visit<T>): T {
    while (this.pos < this.end) {
      const tag = this.varint();
      visit(this, into, tag >>> 3, tag & 7);
    }
    return into;
  }

  /** A nested message (pos at its length): its fields as `fields` hands them out, with
   * the reader's end at the message's end meanwhile; returns `into`. */
  message<T>(into: T, visit: Visit<T>): T {
    const e = this.lenEnd();
    const outer = this.end;
    this.end = e;
    this.fields(into, visit);
    this.end = outer;
    return into;
  }
}

const decoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
const f32 = new Float32Array(1);
const u8 = new Uint8Array(f32.buffer);

/**
 * Decode one GenerateResponse message: `bytes[start, end)` (the h2 transport reads each
 * message in place in the DATA frame it came in, with no subarray view per message).
 */
export function decodeGenerateResponse(bytes: Uint8Array, layout: ResponseLayout, start = 0, end = bytes.length): WireResponse {
  // One reader for every message (decoding never re-enters): no reader object per token.
  const r = reader;
  r.b = bytes;
  r.layout = layout;
  r.pos = start;
  r.end = end;
  // (It holds the last frame until the next message: one read's buffer at most.)
  return r.fields<WireResponse>({ response: NO_RESPONSE }, readResponse);
}

const EMPTY = new Uint8Array(0);
/** A message with neither a chunk nor a complete (replaced, never changed, when one is read). */
const NO_RESPONSE: WireResponse['response'] = Object.freeze({ case: undefined });
const reader = new Reader(EMPTY, SGLANG_RESPONSE, 0, 0);

// Each read* below is the Visit of one message: the fields Portico reads, by number and
// wire type; every other field is skipped.

function readResponse(r: Reader, res: WireResponse, field: number, wire: number): void {
  if (wire === 2 && field === r.layout.chunk) res.response = { case: 'chunk', value: r.message(newChunk(), readChunk) };
  else if (wire === 2 && field === r.layout.complete) res.response = { case: 'complete', value: r.message(newComplete(), readComplete) };
  else r.skip(wire);
}

const newChunk = (): WireChunk => ({
  tokenIds: [], promptTokens: 0, completionTokens: 0, cachedTokens: 0, index: 0,
  outputLogprobs: undefined, inputLogprobs: undefined,
});

function readChunk(r: Reader, c: WireChunk, field: number, wire: number): void {
  if (field === 1 && (wire === 0 || wire === 2)) r.uint32s(wire, c.tokenIds);
  else if (field === 2 && wire === 0) c.promptTokens = r.varint();
  else if (field === 3 && wire === 0) c.completionTokens = r.varint();
  else if (field === 4 && wire === 0) c.cachedTokens = r.varint();
  else if (field === 5 && wire === 2) c.outputLogprobs = r.message(c.outputLogprobs ?? newLogprobs(), readOutputLogprobs);
  else if (field === r.layout.chunkInputLogprobs && wire === 2) c.inputLogprobs = r.message(c.inputLogprobs ?? newLogprobs(), readInputLogprobs);
  else if (field === r.layout.chunkIndex && wire === 0) c.index = r.varint();
  else r.skip(wire);
}

const newComplete = (): WireComplete => ({
  outputIds: [], finishReason: '', promptTokens: 0, completionTokens: 0, cachedTokens: 0, index: 0,
  outputLogprobs: undefined, matchedStop: { case: undefined }, kvTransferParamsJson: undefined, kvTransferParams: undefined,
});

function readComplete(r: Reader, c: WireComplete, field: number, wire: number): void {
  if (field === 1 && (wire === 0 || wire === 2)) r.uint32s(wire, c.outputIds);
  else if (field === 2 && wire === 2) c.finishReason = r.string();
  else if (field === 3 && wire === 0) c.promptTokens = r.varint();
  else if (field === 4 && wire === 0) c.completionTokens = r.varint();
  else if (field === 5 && wire === 0) c.cachedTokens = r.varint();
  else if (field === 6 && wire === 2) c.outputLogprobs = r.message(c.outputLogprobs ?? newLogprobs(), readOutputLogprobs);
  else if (field === r.layout.completeIndex && wire === 0) c.index = r.varint();
  else if (field === r.layout.matchedTokenId && wire === 0) c.matchedStop = { case: 'matchedTokenId', value: r.varint() };
  else if (field === r.layout.matchedStopStr && wire === 2) c.matchedStop = { case: 'matchedStopStr', value: r.string() };
  else if (field === r.layout.kvTransferParamsJson && wire === 2) c.kvTransferParamsJson = r.string();
  else if (field === r.layout.kvTransferParams && wire === 2) c.kvTransferParams = r.message(c.kvTransferParams ?? { remoteHost: '', remotePort: 0 }, readKvTransferParams);
  else r.skip(wire);
}

/** vLLM's legacy KvTransferParams {1 remote_host, 2 remote_port}. */
function readKvTransferParams(r: Reader, p: { remoteHost: string; remotePort: number }, field: number, wire: number): void {
  if (field === 1 && wire === 2) p.remoteHost = r.string();
  else if (field === 2 && wire === 0) p.remotePort = r.varint();
  else r.skip(wire);
}

/** A repeated occurrence of a logprobs field merges into the first. */
const newLogprobs = () => ({ tokenLogprobs: [], topLogprobs: [] });

type Top = { values: number[]; tokenIds: number[] };

/** TopLogProbs {1 values: float, 2 token_ids: uint32}. */
function readTop(r: Reader, t: Top, field: number, wire: number): void {
  if (field === 1 && (wire === 5 || wire === 2)) r.floats(wire, t.values);
  else if (field === 2 && (wire === 0 || wire === 2)) r.uint32s(wire, t.tokenIds);
  else r.skip(wire);
}

/** OutputLogProbs {1 token_logprobs: float, 3 top_logprobs}. */
function readOutputLogprobs(r: Reader, lp: WireLogprobs, field: number, wire: number): void {
  if (field === 1 && (wire === 5 || wire === 2)) r.floats(wire, lp.tokenLogprobs);
  else if (field === 3 && wire === 2) lp.topLogprobs.push(r.message({ values: [], tokenIds: [] }, readTop));
  else r.skip(wire);
}

/** InputLogProbs {1 token_logprobs: InputTokenLogProb, 3 top_logprobs}. */
function readInputLogprobs(r: Reader, lp: WireInputLogprobs, field: number, wire: number): void {
  if (field === 1 && wire === 2) lp.tokenLogprobs.push(r.message({}, readInputTokenLogprob));
  else if (field === 3 && wire === 2) lp.topLogprobs.push(r.message({ values: [], tokenIds: [] }, readTop));
  else r.skip(wire);
}

/** InputTokenLogProb {optional float value = 1}. */
function readInputTokenLogprob(r: Reader, v: { value?: number }, field: number, wire: number): void {
  if (field === 1 && wire === 5) v.value = r.float();
  else r.skip(wire);
}
