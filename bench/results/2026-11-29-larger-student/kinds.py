#!/usr/bin/env python3
"""kinds.py RUN…: each kept run's held-out answers per version, sorted by a rough
reading (not the simulated user's check, which gives the 'liked' column):
talk = opens with an acknowledgment, an apology or a self-introduction in French
("Bien sûr, …", "D'accord, …", "Je suis désolé, …", "Bonjour, je suis …");
french = any other answer with common French words; english = the rest."""
import json, re, sys
TALK = re.compile(r"^(bien sûr|d'accord|je suis désolé|désolé|bonjour|je suis un assistant|je vais|je serai|je peux)", re.I)
FR = re.compile(r"\b(le|la|les|un|une|est|des|et|du|de|sont|qui|pour|dans)\b", re.I)
for run in sys.argv[1:]:
    d = json.load(open(run + '/learn.json'))
    for r in d['runs']:
        print(f"{run} {r['arm']} {r['persona']} seed {r['seed']}")
        print("  version  liked  talk  french  english  (of held-out)")
        for e in r['evals']:
            k = {'talk': 0, 'french': 0, 'english': 0}
            for a in e['held_out']:
                t = a['text'].strip()
                k['talk' if TALK.match(t) else 'french' if len(FR.findall(t)) >= 2 else 'english'] += 1
            print(f"  v{e['policy_version']:<7} {e['satisfied']:5d} {k['talk']:5d} {k['french']:7d} {k['english']:8d}  ({e['asked']})")
