# Per task kind: the RL groups (task, round) of a run and how many had mixed
# outcomes (some but not all of the 8 episodes succeeded: the only groups
# whose success/failure gap gives an advantage), read from the run's clawrl.db.
import sqlite3, sys, json, collections, re
kind = {json.loads(l)['id']: json.loads(l)['prompt'].split()[0] for l in open(sys.argv[1])}
c = sqlite3.connect(f'file:{sys.argv[2]}?mode=ro', uri=True)
groups = collections.OrderedDict()
for key, reason in c.execute("""select s.key, j.reason from judgments j join turns t on t.id=j.turn_id
  join sessions s on s.id=t.session_id where t.idx=0 order by t.seq"""):
    m = re.match(r'agent/[^/]+/([^/]+)/r([^/]+)/s(\d+)/a\d+', key)
    groups.setdefault((m.group(1), m.group(2)), []).append('success true' in reason)
byk = collections.defaultdict(list)
for (t, r), v in groups.items():
    byk[kind[t]].append(sum(v))
print('kind: groups, episodes won / played, groups with 0 / mixed / 8 of 8 successes; per-group successes')
for k, v in sorted(byk.items()):
    print(f'{k:8s} {len(v):3d} groups {sum(v):4d}/{8*len(v):4d}  zero {sum(x == 0 for x in v):3d} mixed {sum(0 < x < 8 for x in v):3d} all {sum(x == 8 for x in v):3d}  {sorted(v)}')
