"""--distill-focus 1 with the unfocused fallback (focus1f: a focused step the gate rejects is taken
again without focus) against --distill-focus 1 without it (focus1, fifty-sixth and fifty-seventh
sessions) and against no focus (combine), on the demo model (SmolLM2-135M-Instruct, Q4_1) with
Qwen2.5-Coder-1.5B-Instruct (Q4_K_M) as its teacher, 6 versions of 8. Held-out k of 20 by round
0-6; "=" where the served version did not change. Reuses ../2026-12-04-demo-focus/compare.py's
report. Run from this folder:

    python3 compare.py
"""
import importlib.util, os
here = os.path.dirname(os.path.abspath(__file__))
prev = os.path.join(here, '..', '2026-12-04-demo-focus')
spec = importlib.util.spec_from_file_location('demo_focus', os.path.join(prev, 'compare.py'))
demo = importlib.util.module_from_spec(spec)
spec.loader.exec_module(demo)

SOURCES = [(os.path.join(prev, 'pair-tldr6-s1'), 'focus1'), (os.path.join(prev, 'pair-tldr6-s1'), 'combine'),
           (os.path.join(here, 'fall-tldr6-s1'), 'focus1f'),
           (os.path.join(here, 'pair-tldr6-s2'), 'focus1f'), (os.path.join(here, 'pair-tldr6-s2'), 'combine'),
           (os.path.join(prev, 'pair-signoff6-s3'), 'focus1'), (os.path.join(prev, 'pair-signoff6-s3'), 'combine'),
           (os.path.join(here, 'fall-signoff6-s3'), 'focus1f'),
           (os.path.join(here, 'pair-french6-s1'), 'focus1f'), (os.path.join(here, 'pair-french6-s1'), 'combine'),
           (os.path.join(here, 'pair-concise6-s1'), 'focus1f'), (os.path.join(here, 'pair-concise6-s1'), 'combine'),
           (os.path.join(here, 'pair-concise6-s2'), 'focus1f'), (os.path.join(here, 'pair-concise6-s2'), 'combine')]
NAMES = {'focus1': '--distill-focus 1', 'focus1f': 'focus + fallback', 'combine': 'without'}

demo.report(SOURCES, NAMES, ('tldr', 'signoff', 'french', 'concise'), focus='focus1f')
