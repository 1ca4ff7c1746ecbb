# teacher_tokens.py RUN [ROUND]: the teacher server's writes up to the
# `evaluated` line of ROUND (default 3) of a bench learn run folder: how
# many, their completion tokens, their seconds, and how many reached 64.
import re, sys
run, upto = sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 3
end = None
for l in open(run + '/run.log'):
    if 'msg=evaluated' in l and re.search(r'\bround=%d\b' % upto, l):
        end = l.split()[0][5:]
n = tok = at64 = 0
ms = 0.0
for l in open(run + '/serve-teacher-server-0.log'):
    if 'msg=request' not in l or (end and l.split()[0][5:] > end):
        continue
    c = int(re.search(r'completion_tokens=(\d+)', l).group(1))
    n, tok, at64 = n + 1, tok + c, at64 + (c >= 64)
    ms += float(re.search(r'ms=([0-9.]+)', l).group(1))
print(f'{run}: {n} writes to round {upto}, {tok} tokens, {ms/1000:.0f} s, {at64} of 64 tokens or more')
