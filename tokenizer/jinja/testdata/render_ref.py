"""Reference renderer for the jinja package's parity tests.

Reads a JSON list of cases [{"template": str, "vars": {...}}] on stdin and
writes a JSON list of results [{"out": str} | {"error": str}] on stdout,
rendering each template with the exact environment transformers compiles
chat templates with (ImmutableSandboxedEnvironment, trim_blocks,
lstrip_blocks, loopcontrols, its tojson/raise_exception/strftime_now).
JSON objects keep their key order (json.loads does).

Run by jinja_test.go through $CLAWRL_PYTHON; needs transformers and jinja2
(scripts/requirements-test.txt).
"""
import json
import sys

from transformers.utils.chat_template_utils import _compile_jinja_template


def main():
    cases = json.load(sys.stdin)
    results = []
    for case in cases:
        try:
            tmpl = _compile_jinja_template(case["template"])
            results.append({"out": tmpl.render(**case["vars"])})
        except Exception as e:  # the Go side only checks that both fail
            results.append({"error": f"{type(e).__name__}: {e}"})
    json.dump(results, sys.stdout, ensure_ascii=False)


if __name__ == "__main__":
    main()
