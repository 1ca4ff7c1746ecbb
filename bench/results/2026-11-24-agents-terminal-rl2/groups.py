# Per group (task, round): successes / episodes, and per trained version: the
# groups its batch came from and the mean |advantage|; read from a run's clawrl.db.
import sqlite3, sys, json, collections, re
db = sys.argv[1]
c = sqlite3.connect(f'file:{db}?mode=ro', uri=True)
groups = collections.OrderedDict()
for key, reason, score, jraw in c.execute("""select s.key, j.reason, j.score, j.votes from judgments j join turns t on t.id=j.turn_id
  join sessions s on s.id=t.session_id where t.idx=0 order by t.seq"""):
    m = re.match(r'agent/[^/]+/([^/]+)/r([^/]+)/s(\d+)/a\d+', key)
    g = (m.group(1), m.group(2))
    ok = 'success true' in reason
    groups.setdefault(g, []).append(ok)
print('# groups (task, round): successes / episodes')
for g, v in groups.items():
    print(g[0], 'r' + g[1], f'{sum(v)}/{len(v)}')
print('# trained versions: samples, groups (task:successes/8), mean |adv|, +adv count')
rows = c.execute("""select sm.trained_version, s.key, sm.reward from samples sm join turns t on t.id=sm.turn_id
  join sessions s on s.id=t.session_id where sm.trained_version>0 order by sm.trained_version""").fetchall()
byv = collections.defaultdict(list)
for v, key, r in rows:
    m = re.match(r'agent/[^/]+/([^/]+)/r([^/]+)/', key)
    byv[v].append(((m.group(1), m.group(2)), r))
for v in sorted(byv):
    gs = collections.Counter(g for g, _ in byv[v])
    advs = [r for _, r in byv[v]]
    print(f'v{v}: {len(advs)} samples from {len(gs)} groups',
          ' '.join(f'{g[0].split("-")[-1]}:{sum(groups.get(g, []))}/{len(groups.get(g, []))}' for g in gs),
          f'mean|A| {sum(map(abs, advs))/len(advs):.3f}, A>0 {sum(a > 0 for a in advs)}')
for v, m in c.execute('select version, metrics from versions order by version'):
    m = json.loads(m)
    print(f'v{v}', {k: (round(x, 4) if isinstance(x, float) else x) for k, x in m.items() if k in ('loss', 'samples', 'tokens', 'entropy', 'staleness_mean', 'staleness_max', 'importance_weight_mean', 'clip_fraction', 'mean_reward')})
