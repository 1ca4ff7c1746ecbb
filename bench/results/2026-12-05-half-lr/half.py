"""--first-epochs 2 at --lr 5e-4 (half serve's default LoRA rate) against --first-epochs 2 at the
default 1e-3 (2026-12-05-first-step) and serve's defaults (the pool's run of the same seed),
persona-seed by persona-seed: held-out answers liked, refused or evading, and opening with "TL"
(tldr), each of 20, by round. Run from the repository root:

    python3 bench/results/2026-12-05-half-lr/half.py
"""
import os, sys
here = os.path.dirname(os.path.abspath(__file__))
R = os.path.join(here, '..')
sys.path.insert(0, os.path.join(R, '2026-12-05-first-step'))
from first import POOL, compare, rounds, cells  # noqa: E402

compare(here, 'first2lr5', lambda p, s: [('defaults', rounds(POOL[(p, s)], p, s, 'combine')),
                                         ('first2', rounds(f'2026-12-05-first-step/{p}-s{s}-first2', p, s, 'first2'))])
print("one-seed diagnostics: --first-epochs 2 --lr 5e-4 (lr5.sh), --first-epochs 2 --lr-warmup 4 (warm.sh),"
      " --first-epochs 3 --lr 5e-4 (window.sh)")
for p, s, arm in (('tldr', 3, 'lr5'), ('tldr', 3, 'warm4'), ('french', 2, 'first3lr5'), ('tldr', 3, 'first3lr5')):
    d = os.path.join(here, f'{p}-s{s}-{arm}')
    if os.path.exists(os.path.join(d, 'learn.json')):
        print(f"  {p} {s} {arm:9s} {cells(rounds(os.path.relpath(d, R), p, s, arm))}")
