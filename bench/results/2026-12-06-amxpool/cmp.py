import sys, numpy as np, struct
def load(p):
    b=open(p,'rb').read(); o=0; out=[]
    while o<len(b):
        n=struct.unpack_from('<i',b,o)[0]; o+=4
        out.append(np.frombuffer(b,dtype='<f4',count=n,offset=o).astype(np.float64)); o+=4*n
    return out
ref=load(sys.argv[1])
for p in sys.argv[2:]:
    g=load(p)
    num=sum(((a-r)**2).sum() for a,r in zip(g,ref)); den=sum((r**2).sum() for r in ref)
    per=[np.linalg.norm(a-r)/max(np.linalg.norm(r),1e-30) for a,r in zip(g,ref)]
    cos=sum((a*r).sum() for a,r in zip(g,ref))/np.sqrt(sum((a*a).sum() for a in g)*den)
    print(p, "rel err overall %.4g  median per-tensor %.4g  max %.4g  cos %.6f"%(np.sqrt(num/den), np.median(per), max(per), cos))
