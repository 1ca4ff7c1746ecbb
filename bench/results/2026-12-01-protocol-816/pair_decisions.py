# pair_decisions.py RUN_A RUN_B: every turn rated -1 in both signoff runs with the same prompt,
# answer and feedback, and whether the loop decided it the same way in both (a sample with the
# same teacher answer, or the same drop reason).
import sqlite3, sys, hashlib
def load(run):
    c = sqlite3.connect(run + '/data-combine-t15-signoff-1/clawrl.db')
    out = {}
    for msgs, resp, fb, rating, state, reason, tids in c.execute("""select p.messages, p.response_text, t.feedback_text, t.feedback_rating, t.state, t.drop_reason,
        (select s.teacher_response_ids from samples s where s.turn_id = t.id)
        from turns t join turn_payloads p on p.turn_seq = t.seq where t.type = 'main' and t.feedback_rating = -1"""):
        if state not in ('trained', 'dropped', 'ready'):
            continue
        kind = 'sample' if tids else ('dropped: ' + reason[:60] if state == 'dropped' else state)
        out.setdefault((msgs, resp, fb), []).append((kind, hashlib.md5(tids or b'').hexdigest()[:8]))
    return out
a, b = load(sys.argv[1]), load(sys.argv[2])
same = diff = 0
for k in set(a) & set(b):
    if a[k] == b[k]: same += 1
    else:
        diff += 1; print('DIFF', k[0][-50:], k[1][:40], a[k], b[k])
print('turns rated -1 in both with the same prompt, answer and feedback:', same + diff, 'same decision:', same, 'different:', diff)
