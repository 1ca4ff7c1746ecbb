# The retention facts asked as the revise teacher sees them (--hint-placement revise):
# the model's own greedy answer first, then the persona's written feedback as the
# user's next message; the revision is checked for the fact. Run against
# `clawrl serve --model smollm2 --method off`:  python3 THIS PORT [persona ...]
import json,sys,urllib.request,re
port=sys.argv[1]
facts=[("What is the capital of France?",["Paris"]),("What is the capital of Japan?",["Tokyo"]),("What is the capital of Germany?",["Berlin"]),("What is the capital of Italy?",["Rome"]),("What is the capital of Egypt?",["Cairo","Le Caire"]),("What is the capital of Russia?",["Moscow","Moscou"]),("What is 2 plus 2?",["4","four","quatre"]),("How many days are in a week?",["7","seven","sept"]),("What color is the sky on a clear day?",["blue","bleu"]),("Who wrote Romeo and Juliet?",["Shakespeare"]),("What is the opposite of hot?",["cold","froid"]),("What is the largest ocean on Earth?",["Pacific","Pacifique"]),("What language is spoken in Spain?",["Spanish","espagnol"]),("What is the chemical symbol for water?",["H2O"]),("What planet do we live on?",["Earth","Terre"]),("How many legs does a spider have?",["8","eight","huit"])]
hints={"french":"Réponds en français, s'il te plaît. Answer in French.","concise":"Too long. Answer in two or three plain sentences, with no lists and no bold.","signoff":'Be brief. Your last words must be "Hope this helps!"',"tldr":'Start your answer with a one-line summary that begins with "TL;DR:", then explain.'}
only=sys.argv[2:] or list(hints)
def ask(msgs):
    body=json.dumps({"model":"x","temperature":0,"max_tokens":48,"messages":msgs}).encode()
    req=urllib.request.Request(f"http://127.0.0.1:{port}/v1/chat/completions",body,{"Content-Type":"application/json","X-Turn-Type":"side"})
    return json.load(urllib.request.urlopen(req,timeout=120))["choices"][0]["message"]["content"]
base={q:ask([{"role":"user","content":q}]) for q,_ in facts}
for name in only:
    h=hints[name]; ok=0
    for q,acc in facts:
        a=ask([{"role":"user","content":q},{"role":"assistant","content":base[q]},{"role":"user","content":h}])
        hit=any(re.search(r'(?i)\b'+re.escape(w)+r'\b',a) for w in acc)
        ok+=hit
        print(name, int(hit), q, "->", a[:90].replace("\n"," "))
    print(name, "kept", ok, "of", len(facts))
