"""One streaming tool-call exchange with the Python openai SDK against a
clawrl gateway (run by api/sdk_test.go): stream a tool call, send its result
back, stream the answer. Prints what the client saw as JSON.

Usage: python openai_stream_tools.py BASE_URL
"""
import json
import sys

from openai import OpenAI

client = OpenAI(base_url=sys.argv[1], api_key="py-key", max_retries=0)
tools = [{"type": "function", "function": {"name": "ls", "description": "list files",
          "parameters": {"type": "object", "properties": {"path": {"type": "string"}}}}}]
messages = [{"role": "user", "content": 'python client [[think:need files]][[tool:ls {"path":"/srv"}]]'}]
headers = {"X-Session-Id": "python-sdk"}

stream = client.chat.completions.create(model="scripted", messages=messages, tools=tools, stream=True,
                                        stream_options={"include_usage": True}, extra_headers=headers)
calls, reasoning, finish, usage, completion_id, chunks = {}, "", None, None, None, 0
for chunk in stream:
    chunks += 1
    completion_id = chunk.id
    if chunk.usage is not None:
        usage = chunk.usage.model_dump()
    for choice in chunk.choices:
        delta = choice.delta
        reasoning += (delta.model_extra or {}).get("reasoning_content") or ""
        for tc in delta.tool_calls or []:
            call = calls.setdefault(tc.index, {"id": "", "name": "", "arguments": ""})
            if tc.id:
                call["id"] = tc.id
            if tc.function and tc.function.name:
                call["name"] = tc.function.name
            if tc.function and tc.function.arguments:
                call["arguments"] += tc.function.arguments
        if choice.finish_reason:
            finish = choice.finish_reason
tool_calls = [calls[i] for i in sorted(calls)]
messages.append({"role": "assistant", "content": None, "tool_calls": [
    {"id": c["id"], "type": "function", "function": {"name": c["name"], "arguments": c["arguments"]}} for c in tool_calls]})
messages.append({"role": "tool", "tool_call_id": tool_calls[0]["id"], "content": "etc var"})

answer = ""
for chunk in client.chat.completions.create(model="scripted", messages=messages, tools=tools, stream=True,
                                            extra_headers=headers):
    for choice in chunk.choices:
        answer += choice.delta.content or ""

print(json.dumps({"id": completion_id, "chunks": chunks, "reasoning": reasoning, "finish": finish, "usage": usage,
                  "tool_calls": tool_calls, "answer": answer}))
