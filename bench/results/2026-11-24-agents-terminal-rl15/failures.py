# What the failed first steps of a run's RL episodes got back from the
# sandbox, per task kind, and the model's text of each failed step
# (read from the run's clawrl.db): python3 failures.py TASKS DB
import sqlite3, sys, json, re, collections
kind = {json.loads(l)['id']: json.loads(l)['prompt'].split()[0] for l in open(sys.argv[1])}
c = sqlite3.connect(f'file:{sys.argv[2]}?mode=ro', uri=True)
modes = collections.Counter()
texts = []
for reason, obs, key, text in c.execute("""select j.reason, t.next_state, s.key, p.response_text from turns t
  join sessions s on s.id=t.session_id join judgments j on j.turn_id=t.id join turn_payloads p on p.turn_seq=t.seq
  where t.idx=0"""):
    if 'success true' in reason:
        continue
    task = re.match(r'agent/[^/]+/([^/]+)/', key).group(1)
    obs = obs or ''
    if 'must be a JSON object' in obs:
        mode = 'invalid tool arguments'
    elif 'exit status' in obs:
        mode = 'command failed: ' + re.search(r'exit status \d+', obs).group(0)
    elif 'no output' in obs:
        mode = 'ran, wrong result'
    else:
        mode = 'no tool call'
    modes[(kind[task], mode)] += 1
    texts.append(f'{task} {mode}: {text!r}')
print('# failed first steps: count, (kind, what happened)')
for k, v in modes.most_common():
    print(v, k)
print('# their text')
print('\n'.join(texts))
