// One streaming tool-call exchange with the npm openai SDK against a clawrl
// gateway (run by api/sdk_test.go): stream a tool call, send its result back,
// stream the answer. Prints what the client saw as JSON.
// Usage: node stream_tools.mjs BASE_URL
import OpenAI from "openai";

const client = new OpenAI({ baseURL: process.argv[2], apiKey: "npm-key", maxRetries: 0 });
const tools = [{ type: "function", function: { name: "ls", description: "list files",
  parameters: { type: "object", properties: { path: { type: "string" } } } } }];
const messages = [{ role: "user", content: 'npm client [[think:need files]][[tool:ls {"path":"/srv"}]]' }];

const headers = { "X-Session-Id": "npm-sdk" };
const first = client.chat.completions.stream(
  { model: "scripted", messages, tools, stream_options: { include_usage: true } }, { headers });
let chunks = 0;
let reasoning = "";
for await (const chunk of first) {
  chunks++;
  for (const c of chunk.choices) reasoning += c.delta.reasoning_content ?? "";
}
const done = await first.finalChatCompletion();
const msg = done.choices[0].message;
messages.push({ role: "assistant", content: msg.content ?? null, tool_calls: msg.tool_calls });
messages.push({ role: "tool", tool_call_id: msg.tool_calls[0].id, content: "etc var" });

const second = client.chat.completions.stream({ model: "scripted", messages, tools }, { headers });
let answer = "";
for await (const chunk of second) {
  for (const c of chunk.choices) answer += c.delta.content ?? "";
}
console.log(JSON.stringify({
  id: done.id, chunks, reasoning, finish: done.choices[0].finish_reason, usage: done.usage,
  tool_calls: msg.tool_calls.map((t) => ({ id: t.id, name: t.function.name, arguments: t.function.arguments })),
  answer,
}));
