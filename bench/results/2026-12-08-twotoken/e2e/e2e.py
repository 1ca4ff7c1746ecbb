import json,sys,urllib.request,concurrent.futures as cf
url=sys.argv[1]
qs=["How do I boil an egg?","What is a black hole?","Write a haiku about rain.","How do I make tea?","What is Python?"]
def ask(i):
    q=qs[i%len(qs)]
    body={"model":"x","messages":[{"role":"user","content":q}],"max_tokens":40,"temperature":0.8 if i>=5 else 0,"seed":i}
    req=urllib.request.Request(url+"/v1/chat/completions",data=json.dumps(body).encode(),headers={"Content-Type":"application/json"})
    return json.load(urllib.request.urlopen(req))["choices"][0]["message"]["content"]
for n in (1,2,3):
    with cf.ThreadPoolExecutor(n) as ex:
        outs=list(ex.map(ask, range(8)))
    print(n, json.dumps(outs))
