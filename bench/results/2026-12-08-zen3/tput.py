# Teacher throughput in a burst run: completion tokens over the span from the first
# request's start to the last one's end (the teacher's serve.log).
import re, sys, datetime
for run in sys.argv[1:]:
    toks, starts, ends = 0, [], []
    for line in open(f"{run}/data/teacher/serve.log"):
        if "path=/v1/chat" not in line: continue
        t = datetime.datetime.fromisoformat(re.search(r"time=(\S+)Z", line).group(1))
        ms = float(re.search(r" ms=([0-9.]+)", line).group(1))
        toks += int(re.search(r"completion_tokens=(\d+)", line).group(1))
        ends.append(t); starts.append(t - datetime.timedelta(milliseconds=ms))
    span = (max(ends) - min(starts)).total_seconds()
    print(f"{run}: {len(ends)} answers, {toks} tokens in {span:.1f} s, {toks/span:.1f} tok/s")
