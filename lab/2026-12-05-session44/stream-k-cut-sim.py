# stream-k-cut-sim.py — kernels/scheduler.cuh's StreamKSchedule (first, next, split, max_segments) with stream_k_cut,
# transcribed; checks over ~50,000 (tiles, K blocks, workers) cases that every K block of every tile is covered once,
# no unit is empty, and each split tile's units are segments 0 .. nseg - 1 in K order. Run: python3 stream-k-cut-sim.py
import itertools
def cut(r,kb,P):
    per=(r*kb+P-1)//P; stride=kb
    s=min(P//r,kb//2)
    if s<2: return per,stride,False
    L=(kb+s-1)//s
    if 5*L>6*per: return per,stride,False
    return L,(kb+L-1)//L*L,True
def make(T,kb,P):
    d=dict(total=T,kb=kb,P=P,dp=T,sk=0,per=1,stride=kb,uni=False)
    waves,rem=divmod(T,P)
    if rem==0 or kb<2: return d
    d['dp']=waves*P
    d['per'],d['stride'],d['uni']=cut(rem,kb,P)
    d['sk']=rem*d['stride']
    return d
def shared_unit(s,it,end):
    rel=it//s['stride']; kb0=it-rel*s['stride']
    return (s['dp']+rel,kb0,min(s['kb'],kb0+(end-it)))
def range_end(s,w): return min((w+1)*s['per'],s['sk'])
def first(s,w):
    if w<s['dp']: return (w,0,s['kb'])
    it=w*s['per']
    if it>=s['sk']: return None
    return shared_unit(s,it,range_end(s,w))
def nxt(s,w,u):
    if u[0]<s['dp']:
        if u[0]+s['P']<s['dp']: return (u[0]+s['P'],0,s['kb'])
        it=w*s['per']
        if it>=s['sk']: return None
        return shared_unit(s,it,range_end(s,w))
    it=(u[0]-s['dp'])*s['stride']+(s['stride'] if u[2]==s['kb'] else u[2]); end=range_end(s,w)
    if it>=end: return None
    return shared_unit(s,it,end)
def split(s,u):
    if u[0]<s['dp']: return 0,1,-1
    slot=u[0]-s['dp']
    fw=slot*s['stride']//s['per']; lw=((slot+1)*s['stride']-1)//s['per']
    return (slot*s['stride']+u[1])//s['per']-fw, lw-fw+1, slot
def maxseg(s): return (s['kb']+s['per']-1)//s['per']+1
nuni=0
for T in range(1,700,1):
  for kb in [1,2,3,5,8,16,24,40,64,66,128,224]:
    for P in [1,2,7,66,128,132]:
      s=make(T,kb,P); nuni+=s['uni']
      cov={}
      units={}
      for w in range(P):
        u=first(s,w); n=0
        while u is not None:
          assert u[1]<u[2], (T,kb,P,w,u)
          for k in range(u[1],u[2]):
            assert (u[0],k) not in cov; cov[(u[0],k)]=w
          seg,nseg,slot=split(s,u)
          units.setdefault(u[0],[]).append((seg,nseg,u[1]))
          u=nxt(s,w,u); n+=1
          assert n<10000
      assert len(cov)==T*kb,(T,kb,P,len(cov))
      for t,us in units.items():
        nsegs={x[1] for x in us}; assert len(nsegs)==1,(T,kb,P,t,us)
        ns=nsegs.pop(); assert ns==len(us),(T,kb,P,t,us)
        segs=sorted(us,key=lambda x:x[2]); assert [x[0] for x in segs]==list(range(ns)),(T,kb,P,t,us)
        assert ns<=maxseg(s)
print("ok, uniform cases", nuni)
for (T,kb) in [(162,128),(561,66),(288,64),(200,40),(480,16),(384,64),(112,128),(16,224),(64,16),(144,24)]:
    s=make(T,kb,132); print(T,kb,s['uni'],s['per'],s['stride'], 'rem',T%132)
