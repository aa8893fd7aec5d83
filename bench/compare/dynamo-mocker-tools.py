# Dynamo 1.6.1's mocker with a tool-call parser. A real Dynamo worker (vllm, sglang) takes
# --dyn-tool-call-parser and puts it in the model's runtime config, which the frontend reads;
# the mocker has no such flag, so this sets the same field on the runtime config the mocker
# builds, then runs the mocker unchanged. Parser name from PORTICO_COMPARE_DYN_TOOL_PARSER.
import os

import dynamo.mocker.main as mocker

_build = mocker.build_runtime_config


def build_runtime_config(engine_args):
    block_size, rc = _build(engine_args)
    rc.tool_call_parser = os.environ["PORTICO_COMPARE_DYN_TOOL_PARSER"]
    return block_size, rc


mocker.build_runtime_config = build_runtime_config
mocker.main()
