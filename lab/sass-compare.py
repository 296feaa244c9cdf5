#!/usr/bin/env python3
# sass-compare.py — are two kernel caches' kernels the same machine code? For each kernel name (the keys files are
# `tmagemm compile-check --print-keys` output of the two builds), the ELF inside each cached cubin (jit/cache.cpp's
# file: magic, name, size, image) is disassembled with nvdisasm (NVDISASM, default: on PATH; PyPI's
# nvidia-cuda-nvdisasm carries one), addresses and mangled names masked, and the instruction streams compared.
# Usage: lab/sass-compare.py OLD_KERNELS_DIR OLD_KEYS NEW_KERNELS_DIR NEW_KEYS
import os, re, struct, subprocess, sys, tempfile
D=os.environ.get('NVDISASM','nvdisasm')
old_dir, old_keys, new_dir, new_keys = sys.argv[1:5]
def keys(p):
    m={}
    for line in open(p):
        k,n=line.split()
        m[n]=k
    return m
ok, nk = keys(old_keys), keys(new_keys)
def sass(path):
    b=open(path,'rb').read()
    i=b.index(b'\x7fELF')
    size=struct.unpack('<Q', b[i-8:i])[0]
    with tempfile.NamedTemporaryFile(suffix='.elf') as f:
        f.write(b[i:i+size]); f.flush()
        out=subprocess.run([D,'-c',f.name],capture_output=True,text=True).stdout
    lines=[]
    for l in out.splitlines():
        l=re.sub(r'/\*[0-9a-f]{4,}\*/','',l)
        l=re.sub(r'_Z[A-Za-z0-9_]+','SYM',l)
        l=l.strip()
        if l: lines.append(l)
    return lines
same=diff=missing=0
for name,k in sorted(nk.items()):
    p_new=f'{new_dir}/{k}.cubin'
    if name not in ok or not os.path.exists(p_new) or not os.path.exists(f'{old_dir}/{ok[name]}.cubin'):
        missing+=1; continue
    a=sass(f'{old_dir}/{ok[name]}.cubin'); b=sass(p_new)
    ia=[l for l in a if not l.startswith('.')]; ib=[l for l in b if not l.startswith('.')]
    if ia==ib: same+=1
    else:
        diff+=1
        print('DIFF', name, len(ia), len(ib))
print(f'same {same} differ {diff} not compared {missing}')
