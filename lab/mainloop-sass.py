#!/usr/bin/env python3
# mainloop-sass.py — the consumer K loop of cached kernels, read from their SASS: for each kernel name matching a
# regex (keys file: `tmagemm compile-check --print-keys` output), the innermost loops that hold HGMMA instructions
# (a backward branch whose range holds them), with their instruction count, HGMMA count and shapes, the mbarrier
# operations (SYNCS.*), the wgmma waits (WARPGROUP.DEPBAR) and what else is in them. A static view of what a K block
# costs the consumer besides its wgmmas; it says nothing about stalls. Cubins as lab/sass-compare.py reads them.
# Usage: lab/mainloop-sass.py KERNELS_DIR KEYS REGEX   (NVDISASM: nvdisasm's path, default on PATH)
import collections, os, re, struct, subprocess, sys, tempfile

D = os.environ.get('NVDISASM', 'nvdisasm')
kdir, keys_file, pattern = sys.argv[1:4]


def sass(path):
    b = open(path, 'rb').read()
    i = b.index(b'\x7fELF')
    size = struct.unpack('<Q', b[i - 8:i])[0]
    with tempfile.NamedTemporaryFile(suffix='.elf') as f:
        f.write(b[i:i + size])
        f.flush()
        out = subprocess.run([D, '-c', f.name], capture_output=True, text=True).stdout
    ins, labels, pending = [], {}, []
    for line in out.splitlines():
        lm = re.match(r'\s*(\.L_x_\d+):', line)
        if lm:
            pending.append(lm.group(1))
            continue
        m = re.match(r'\s*/\*([0-9a-f]{4,})\*/\s+(.*?);', line)
        if m:
            a = int(m.group(1), 16)
            for name in pending:
                labels[name] = a
            pending = []
            ins.append((a, m.group(2).strip()))
    return ins, labels


def opcode(text):
    t = re.sub(r'^@!?U?P[T0-9]+\s+', '', text)
    return t.split()[0] if t else ''


for line in open(keys_file):
    key, name = line.split()
    if not re.search(pattern, name):
        continue
    path = f'{kdir}/{key}.cubin'
    if not os.path.exists(path):
        print(f'{name}: no cubin')
        continue
    ins, labels = sass(path)
    addr_index = {a: i for i, (a, _) in enumerate(ins)}
    loops = []
    for i, (a, t) in enumerate(ins):
        m = re.search(r'\bBRA(?:\.[A-Z.]+)?\s+(?:`\((\.L_x_\d+)\)|0x([0-9a-f]+))', t)
        if not m:
            continue
        target = labels.get(m.group(1), -1) if m.group(1) else int(m.group(2), 16)
        if target >= a or target not in addr_index:
            continue
        body = ins[addr_index[target]:i + 1]
        if any(opcode(x).startswith('HGMMA') for _, x in body):
            loops.append(body)
    # innermost: no other HGMMA loop strictly inside
    loops.sort(key=len)
    shown = []
    for body in loops:
        lo, hi = body[0][0], body[-1][0]
        if any(s[0][0] >= lo and s[-1][0] <= hi for s in shown):
            continue
        shown.append(body)
    print(f'== {name}')
    for body in sorted(shown, key=lambda b: b[0][0]):
        ops = collections.Counter(opcode(t) for _, t in body)
        hg = [t for _, t in body if opcode(t).startswith('HGMMA')]
        shapes = collections.Counter(re.search(r'HGMMA\.(\S+)', t).group(1) for t in hg)
        other = sum(v for k, v in ops.items() if not k.startswith('HGMMA'))
        top = ', '.join(f'{k} {v}' for k, v in ops.most_common() if not k.startswith('HGMMA'))[:400]
        print(f'  loop 0x{body[0][0]:x}-0x{body[-1][0]:x}: {len(body)} instructions, HGMMA {len(hg)} '
              f'({", ".join(f"{k} x{v}" for k, v in shapes.items())}), other {other}: {top}')
