"""backlog.py DB...: what a store's teacher backlog came to: main turns by
state and drop reason (kind), teacher-written samples built, and among them
how many were trained, refused stale after the teacher wrote them, or never
trained."""
import sqlite3, sys, re
for db in sys.argv[1:]:
    c = sqlite3.connect(db)
    print(db)
    rows = c.execute("""select state, coalesce(drop_reason,'') from turns where type='main'""").fetchall()
    kinds = {}
    for st, why in rows:
        k = st
        if st == 'dropped':
            k += ': ' + ('stale, refused before its sample was built' if 'refused before its sample' in why
                         else re.split(r'[:;]', why)[0])
        kinds[k] = kinds.get(k, 0) + 1
    for k, n in sorted(kinds.items(), key=lambda x: -x[1]):
        print('  %-60s %d' % (k, n))
    built = c.execute("select count(*) from samples where teacher_response_ids is not null").fetchone()[0]
    trained = c.execute("select count(*) from samples s join turns t on t.id=s.turn_id where s.teacher_response_ids is not null and t.state='trained'").fetchone()[0]
    stale = c.execute("select count(*) from samples s join turns t on t.id=s.turn_id where s.teacher_response_ids is not null and t.state='dropped' and t.drop_reason like 'stale%'").fetchone()[0]
    print('  teacher-written samples %d: trained %d, refused stale after the teacher wrote them %d' % (built, trained, stale))
    vs = c.execute("select version, status from versions order by version").fetchall()
    print('  versions', ' '.join('v%d:%s' % (v, s[0]) for v, s in vs))
