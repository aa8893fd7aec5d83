// Help texts for the portico command line. Every flag a command accepts is listed here.

export const MAIN_HELP = `portico — a native-accelerated frontend for LLM serving

Usage:
  portico serve --model-path DIR | --model NAME=DIR ...   serve the OpenAI and Anthropic APIs for one or several models
  portico mock-engine --model-path DIR [options] run a GPU-free engine simulator (SGLang or vLLM gRPC protocol)
  portico register --discovery etcd://HOST:PORT --worker URL --model NAME
                                                 register a worker that cannot (SGLang, vLLM) in etcd, as a sidecar
  portico bench --url URL --tokenizer DIR [...]   load a server with LLM traffic; report TTFT, TPOT, ITL, throughput
  portico --help | portico <command> --help

Run 'portico serve --help' for the serving options.
`;

export const REGISTER_HELP = `Usage: portico register --discovery etcd://HOST:PORT[,HOST:PORT] --worker URL --model NAME [options]

Register an engine worker that does not register itself (a real SGLang or vLLM server) in
etcd, as a sidecar: its record is put under a key held by a lease this process keeps alive;
SIGTERM or SIGINT revokes the lease, and frontends started with --discovery drop the worker.

  --discovery etcd://HOST:PORT[,HOST:PORT]   etcd endpoints. (required)
  --worker URL              grpc://HOST:PORT (SGLang) or vllm+grpc://HOST:PORT (vLLM). (required)
  --model NAME              The model name frontends serve it under. (required)
  --namespace NS            etcd key prefix NS/workers/. Default: portico.
  --dp-size N               Data-parallel ranks of the worker. Default: 1.
  --block-size N            KV block size in tokens. Default: 0 (not told).
  --role ROLE               aggregated (default), prefill or decode: the worker's part in
                            disaggregated serving (its engine's own declaration wins).
  --lease-ttl-secs S        Lease TTL. Default: 10.
  -h, --help                Show this help.
`;

export const MOCK_ENGINE_HELP = `Usage: portico mock-engine --model-path DIR [options]

Run a GPU-free engine worker for tests and benchmarks. It speaks SGLang's
scheduler gRPC protocol (sglang.grpc.scheduler.SglangScheduler) or vLLM's
engine protocol (vllm.grpc.engine.VllmEngine), and in 'sim' mode simulates a
vLLM-style engine: waiting/running queues, a paged KV cache with prefix
caching, chunked prefill, preemption and a prefill/decode timing model.

Basics:
  --model-path DIR          Model folder; its tokenizer gives the vocabulary size and EOS ids, and a
                            vision_config in its config.json makes GetModelInfo report supports_vision. (required)
  --port P                  gRPC port. Default: 30000. 0 picks a free port.
  --host ADDR               Address to bind. Default: 127.0.0.1.
  --mode echo|sim           'echo' streams the prompt's token ids back, one per message, at once;
                            'sim' runs the engine simulator. Default: echo.
  --protocol sglang|vllm    Wire protocol. Portico reaches a vLLM one as vllm+grpc://HOST:PORT.
                            Default: sglang.

Timing (sim; all in simulated milliseconds):
  --step-ms MS              Fixed cost of a decode step. Default: 10.
  --prefill-ms-per-token MS Prefill cost per new (uncached) prompt token. Default: 0.02.
  --decode-ms-per-seq MS    Decode cost per sequence in the batch. Default: 0.02.
  --decode-ms-per-kv-token MS
                            Decode cost per 1000 KV tokens the batch attends over. Default: 0.002.
  --speedup-ratio X         Run X times faster than real time (timing divided by X). Default: 1.

Scheduler and KV cache (per data-parallel rank):
  --data-parallel-size N    Ranks, each with its own scheduler and KV pool. Default: 1.
  --max-num-seqs N          Running sequences at most; the rest wait. Default: 256.
  --max-num-batched-tokens N
                            Token budget of one step (prefill chunks + decodes). Default: 8192.
  --no-chunked-prefill      Prefill each prompt in one step instead of in budget-sized chunks.
  --block-size N            Tokens per KV block. Default: 16.
  --num-blocks N            KV blocks. Default: 62500 (1,000,000 tokens at block size 16).
  --no-prefix-caching       Do not reuse cached prompt prefixes (sim caches by default).
  --max-model-len N         Context length (prompt + output). Default: 32768.
  --hide-context-length     GetModelInfo reports max_context_length 0 (an engine that does not say).

Output (sim):
  --eos-probability P       Chance per step of ending with EOS once min tokens are out. Default: 0.02.
  --seed N                  Mixed into every request's sampling seed (tokens depend on the
                            request id, or on the request's own seed where the protocol has one).
                            Default: 0.
  --stream-interval N       Tokens per streamed message (the last may hold fewer). Default: 1.
  --embedding-dim N         Length of the L2-normalised vectors the Embed rpc answers (a
                            seeded hash of the input ids: same ids, same vector). 0: no Embed
                            rpc (a generation-only engine: Embed answers UNIMPLEMENTED). Default: 256.
  --deterministic           sim: the token at each position depends only on the token ids before
                            it (prompt and generated so far), EOS included; nothing is seeded per
                            request or worker, so a request continued elsewhere as prompt +
                            generated ids produces what one run would. The output is a script the
                            context picks: <think>words</think>, an answer and, when the prompt
                            declares tools, often a hermes <tool_call>{json}</tool_call> naming one
                            of them, then EOS. --seed and --reasoning-tokens are not used.
  --reasoning-tokens N      Open every answer with <think>, N tokens, </think> (the tokenizer
                            must have those tokens).
  --reasoning-parser NAME   Parser name the engine reports in GetServerInfo (not applied).
  --tool-call-parser NAME   Parser name the engine reports in GetServerInfo (not applied).

Shutdown:
  --shutdown-grace-secs S   On SIGTERM / SIGINT: leave etcd (--register), answer new Generates
                            UNAVAILABLE ("the engine is shutting down") and HealthCheck not
                            serving, give requests in flight S seconds to finish, end the rest
                            with UNAVAILABLE, exit. Default: 5.

Faults (for tests of error mapping and fault handling):
  --faults                  Fail a request whose prompt text holds [[fault:KIND]] (at once) or
                            [[fault:KIND@N]] (after N output tokens). KIND: invalid_argument,
                            context_length, resource_exhausted, unavailable, deadline_exceeded,
                            internal (a traceback in the message), reset (HTTP/2 RST_STREAM
                            ENHANCE_YOUR_CALM), goaway (the connection closed with GOAWAY
                            ENHANCE_YOUR_CALM), hang (never answer), no_rendezvous (a prefill
                            answers but never hands its KV over). [[fault:KIND:ROLE]] and
                            [[fault:KIND:ROLE@N]] fire only on a worker of that --role. Off by default.

Disaggregated prefill/decode (a router sends each request to one of each):
  --role aggregated|prefill|decode
                            'prefill' computes prompts and hands their KV to decode workers over
                            its bootstrap server (SGLang: by disaggregated_params' room; vLLM: by
                            the remote_request_id its GenerateComplete's kv_transfer_params name);
                            'decode' takes a request's KV from the prefill worker the request names,
                            pays the transfer time, then decodes. SGLang workers of either role
                            refuse requests without disaggregated_params. GetServerInfo reports the
                            role (SGLang server_args disaggregation_mode; vLLM kv_role kv_producer /
                            kv_consumer). Default: aggregated.
  --bootstrap-port P        Prefill: the bootstrap / side-channel server's port (SGLang's
                            disaggregation_bootstrap_port, vLLM's remote_port). Default: 0 (a free
                            one; it is printed).
  --kv-transfer-ms-per-token MS
                            Simulated ms per prompt token to move KV to the decode worker.
                            Default: sim 0.02, echo 0.
  --kv-connector NAME       vLLM: the KV connector GetServerInfo names. Default: NixlConnector.
  --rendezvous-timeout-ms MS
                            How long a decode waits for its KV (then it fails as the engine
                            does), and a prefill holds KV nobody took. Default: 30000.

KV events (always on the SubscribeKvEvents gRPC stream; optionally also ZMQ):
  --kv-events-zmq ENDPOINT  Also publish vLLM-format events on a ZMQ PUB socket bound here,
                            e.g. tcp://*:5557 (tcp://127.0.0.1:* picks a port; it is printed).
  --kv-events-replay ENDPOINT
                            ZMQ ROUTER socket answering replay requests for missed batches.
  --kv-events-topic TOPIC   Topic frame of every message. Default: empty.
  --kv-events-format array|map
                            msgpack layout of batches: vLLM's older array-like structs or the
                            newer map-like ones. Default: map.

Distributed (docs/distributed.md):
  --register etcd://HOST:PORT[,HOST:PORT]
                            Register in etcd under a key held by a lease this process keeps
                            alive (revoked on SIGTERM/SIGINT), so frontends started with
                            --discovery find it.
  --model-name NAME         The model name registered. Default: the model folder's name.
  --namespace NS            etcd key prefix NS/workers/ (and NATS subject prefix). Default: portico.
  --lease-ttl-secs S        Lease TTL: a worker that stops renewing is dropped this long after.
                            Default: 10.
  --event-plane nats://HOST:PORT[,HOST:PORT]
                            Also publish KV events to NATS (JetStream stream NS_KV, subject
                            NS.kv.<model>.<worker URL>, base64url tokens), where frontends started
                            with --event-plane read them.
  --advertise-host HOST     Host in the registered URL and the KV event subject (and, for a vLLM
                            --role prefill, the remote_host its kv_transfer_params name). Default:
                            --host, or the machine's hostname when --host is 0.0.0.0.

Environment:
  PORTICO_SIM_EMIT_TRACE=FILE
                            Record when each token left the simulator (CLOCK_MONOTONIC ms) and
                            its id, per request id, and write them to FILE as JSON on SIGTERM or
                            SIGINT (bench/stream.bench.ts uses it to time every token).

  -h, --help                Show this help.
`;
