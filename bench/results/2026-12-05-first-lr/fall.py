"""A rate that falls after the first batch (--first-epochs 2 --first-lr 1e-3 --lr 5e-4, arm "fall") against
serve's defaults, --first-epochs 2 at 1e-3 (2026-12-05-first-step) and --first-epochs 2 at 5e-4
(2026-12-05-half-lr), persona-seed by persona-seed: held-out answers liked, refused or evading, and
opening with "TL" (tldr), each of 20, by round. Run from the repository root:

    python3 bench/results/2026-12-05-first-lr/fall.py
"""
import os, sys
here = os.path.dirname(os.path.abspath(__file__))
R = os.path.join(here, '..')
sys.path.insert(0, os.path.join(R, '2026-12-05-first-step'))
from first import POOL, compare, rounds  # noqa: E402

compare(here, 'fall', lambda p, s: [('defaults', rounds(POOL[(p, s)], p, s, 'combine')),
                                    ('first2', rounds(f'2026-12-05-first-step/{p}-s{s}-first2', p, s, 'first2')),
                                    ('first2lr5', rounds(f'2026-12-05-half-lr/{p}-s{s}-first2lr5', p, s, 'first2lr5'))])
