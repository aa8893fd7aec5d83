// Help texts for the portico command line. Every flag a command accepts is listed here.

export const MAIN_HELP = `portico — a native-accelerated frontend for LLM serving

Usage:
  portico serve --model-path DIR [options]       serve the OpenAI API for one model
  portico mock-engine --model-path DIR [options] run a GPU-free engine speaking the SGLang scheduler gRPC protocol
  portico --help | portico <command> --help

Run 'portico serve --help' for the serving options.
`;

export const SERVE_HELP = `Usage: portico serve --model-path DIR [options]

Serve the OpenAI-compatible HTTP API for one model, tokenizing natively and
generating on engine workers reached over gRPC.

Model:
  --model-path DIR          A local Hugging Face layout folder: tokenizer.json and
                            tokenizer_config.json (chat template), and config.json /
                            generation_config.json when present.            (required)
  --model-name NAME         The name clients send as "model". Default: the folder's name.

Workers (at least one of --worker or --mock):
  --worker URL              An engine worker, grpc://HOST:PORT, speaking SGLang's scheduler
                            gRPC protocol. Repeat the flag for several workers.
  --mock MODE               Start in-process mock engines, reached over real gRPC on
                            loopback: 'echo' (streams the prompt's tokens back) or 'sim'
                            (generated tokens with a prefill/decode timing model).
  --mock-workers N          How many mock engines to start with --mock. Default: 2.

HTTP:
  --http-port P             Port to listen on. Default: 8000. 0 picks a free port.
  --host ADDR               Address to bind. Default: 0.0.0.0.
  --max-body-bytes N        Largest accepted request body, in bytes. Default: 47185920 (45 MiB).

Output parsing:
  --tool-call-parser NAME   Parse tool calls out of the generated text with this parser.
  --reasoning-parser NAME   Split reasoning out of the generated text with this parser.
                            An unknown name is a startup error that lists the valid names.

Environment:
  PORTICO_IGNORE_UNSUPPORTED_FIELDS=1   Drop unsupported request fields instead of
                                        answering 400 (also DYN_IGNORE_OPENAI_FE_UNSUPPORTED_FIELDS).

  -h, --help                Show this help.
`;

export const MOCK_ENGINE_HELP = `Usage: portico mock-engine --model-path DIR [options]

Run a GPU-free mock engine worker that speaks SGLang's scheduler gRPC protocol
(sglang.grpc.scheduler.SglangScheduler), for tests and benchmarks.

  --model-path DIR          Model folder; its tokenizer gives the vocabulary size and EOS ids. (required)
  --port P                  gRPC port. Default: 30000. 0 picks a free port.
  --host ADDR               Address to bind. Default: 127.0.0.1.
  --mode echo|sim           'echo' streams the prompt's token ids back, one per step;
                            'sim' generates tokens with a simple timing model. Default: echo.
  --step-ms MS              sim: time per decode step. Default: 10.
  --prefill-ms-per-token MS sim: prefill time per prompt token. Default: 0.02.
  -h, --help                Show this help.
`;
