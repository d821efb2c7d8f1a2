#!/usr/bin/env python3
"""Mutation fuzzing of ndconv's readers: small NIfTI-1/-2 (single file, pair, gzip, several gzip
members, byte-swapped), MetaImage (.mha/.mhd) and NRRD (.nrrd/.nhdr) files, their header fields set
to extreme or malformed values, truncated or corrupted, each run through `ndconv info`, `smooth`
and `convert` under an 8 GiB address-space limit and a 30 s timeout. Reports a crash (a signal or
an unexpected exit code), a hang, or an error that is not one `ndconv: error:` line, and keeps the
file in /tmp/fuzz. A development tool, not a test; it found the subnormal-sform hang (0e45a34).

    python3 dev/fuzz_readers.py build/src/cli/ndconv SECONDS SEED
"""
import gzip, os, random, struct, subprocess, sys, time, zlib, shutil, tempfile
NDCONV = os.path.abspath(sys.argv[1]); SECONDS = float(sys.argv[2]); SEED = int(sys.argv[3])
os.makedirs("/tmp/fuzz", exist_ok=True)
rng = random.Random(SEED)
work = tempfile.mkdtemp(prefix="fz%d_" % SEED)
found = []

def nifti(shape=(12, 10, 6), dtype=2, bitpix=8, vox_offset=352.0):
    h = bytearray(348)
    struct.pack_into('<i', h, 0, 348)
    dims = [len(shape)] + list(shape) + [1] * (7 - len(shape))
    struct.pack_into('<8h', h, 40, *dims)
    struct.pack_into('<h', h, 70, dtype); struct.pack_into('<h', h, 72, bitpix)
    struct.pack_into('<8f', h, 76, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0)
    struct.pack_into('<f', h, 108, vox_offset)
    struct.pack_into('<f', h, 112, 1.0)  # scl_slope
    struct.pack_into('<h', h, 252, 1); struct.pack_into('<h', h, 254, 1)  # qform/sform codes
    struct.pack_into('<f', h, 280, 1.0); struct.pack_into('<f', h, 300, 1.0); struct.pack_into('<f', h, 320, 1.0)
    h[344:348] = b'n+1\0'
    n = 1
    for s in shape: n *= s
    data = bytes(rng.randrange(256) for _ in range(n * bitpix // 8))
    return bytes(h) + b'\0' * 4 + data

def mutate_bytes(b, header_len=352):
    b = bytearray(b)
    for _ in range(rng.randint(1, 6)):
        kind = rng.random()
        if kind < 0.5:
            i = rng.randrange(min(len(b), header_len)); b[i] = rng.randrange(256)
        elif kind < 0.8:
            i = rng.randrange(0, min(len(b), header_len) - 4) & ~1
            val = rng.choice([0, -1, 1, 32767, -32768, 2**31 - 1, -2**31, 65535, 7, 8])
            fmt = rng.choice(['<h', '<i', '<f'])
            try:
                struct.pack_into(fmt, b, i, float(val) if fmt == '<f' else val if fmt == '<i' else max(-32768, min(32767, val)))
            except struct.error:
                pass
        else:
            i = rng.randrange(min(len(b), header_len) - 4)
            struct.pack_into('<f', b, i, rng.choice([float('nan'), float('inf'), -float('inf'), 1e30, -1e-30, 0.0]))
    if rng.random() < 0.2:
        b = b[:rng.randrange(len(b))]
    return bytes(b)

MHA_FIELDS = ['ObjectType = Image', 'NDims = 3', 'DimSize = 12 10 6', 'ElementSpacing = 1 1 1',
              'Offset = 0 0 0', 'ElementType = MET_UCHAR', 'ElementByteOrderMSB = False']
MHA_VALUES = {'NDims': ['0', '1', '4', '5', '-1', '999999', 'x', '3 3'],
              'DimSize': ['0 10 6', '-1 10 6', '12 10', '12 10 6 7', '4294967296 1 1', '99999 99999 99999', '12 10 6.5', '', 'a b c', '1 1 1'],
              'ElementSpacing': ['0 0 0', 'nan 1 1', 'inf 1 1', '-1 1 1', '1', '1e400 1 1'],
              'Offset': ['nan nan nan', '1e308 1 1', '1'],
              'ElementType': ['MET_FLOAT', 'MET_DOUBLE', 'MET_SHORT', 'MET_INT', 'MET_UINT', 'MET_LONG_LONG', 'MET_STRING', 'BOGUS', ''],
              'ElementNumberOfChannels': ['0', '3', '99999999', '-2'],
              'CompressedData': ['True', 'False', 'maybe'],
              'CompressedDataSize': ['0', '10', '-5', '999999999999'],
              'HeaderSize': ['-1', '100', '99999999', '0'],
              'ElementByteOrderMSB': ['True'],
              'TransformMatrix': ['1 0 0 0 1 0 0 0 1', 'nan 0 0 0 1 0 0 0 1', '0 0 0 0 0 0 0 0 0', '1 2'],
              'ElementDataFile': ['LOCAL', '../x.raw', '/etc/passwd', 'x%d.raw 0 5 1', 'LIST', 'data.raw', '', 'nonexistent.raw']}

def mha():
    fields = list(MHA_FIELDS)
    for _ in range(rng.randint(1, 4)):
        key = rng.choice(list(MHA_VALUES))
        line = key + ' = ' + rng.choice(MHA_VALUES[key])
        idx = [i for i, f in enumerate(fields) if f.startswith(key + ' ')]
        if idx and rng.random() < 0.8: fields[idx[0]] = line
        else: fields.insert(rng.randrange(len(fields) + 1), line)
    if rng.random() < 0.2: rng.shuffle(fields)
    df = [f for f in fields if f.startswith('ElementDataFile')]
    fields = [f for f in fields if not f.startswith('ElementDataFile')] + (df[-1:] if df else ['ElementDataFile = LOCAL'])
    data = bytes(rng.randrange(256) for _ in range(rng.choice([720, 720, 2880, 100, 0, 5000])))
    if 'CompressedData = True' in fields and rng.random() < 0.7:
        data = zlib.compress(data)[:rng.choice([None, None, 5, 20])]
    return ('\n'.join(fields) + '\n').encode() + data

NRRD_VALUES = {'type': ['uchar', 'float', 'double', 'short', 'int', 'uint64', 'block', 'bogus'],
               'dimension': ['0', '1', '3', '4', '17', '-1', 'x'],
               'sizes': ['12 10 6', '0 10 6', '-1 10 6', '12 10', '99999 99999 99999', '4294967297 1 1'],
               'encoding': ['raw', 'gzip', 'bzip2', 'ascii', 'hex', 'bogus'],
               'endian': ['little', 'big', 'middle'],
               'space directions': ['(1,0,0) (0,1,0) (0,0,1)', '(nan,0,0) (0,1,0) (0,0,1)', 'none (0,1,0) (0,0,1)', '(1,0) (0,1)'],
               'space origin': ['(0,0,0)', '(nan,0,0)', '(1,2)'],
               'data file': ['../x.raw', '/etc/passwd', 'x%03d.raw 0 5 1', 'LIST', 'nonexistent.raw', 'd.raw'],
               'line skip': ['0', '5', '-1', '999999'], 'byte skip': ['0', '-1', '10', '99999999'],
               'spacings': ['1 1 1', 'nan 1 1', '0 0 0'], 'kinds': ['domain domain domain', 'RGB-color domain domain', 'bogus']}

def nrrd():
    fields = ['type: uchar', 'dimension: 3', 'sizes: 12 10 6', 'encoding: raw', 'endian: little']
    for _ in range(rng.randint(1, 4)):
        key = rng.choice(list(NRRD_VALUES))
        line = key + ': ' + rng.choice(NRRD_VALUES[key])
        idx = [i for i, f in enumerate(fields) if f.startswith(key + ':')]
        if idx and rng.random() < 0.8: fields[idx[0]] = line
        else: fields.append(line)
    data = bytes(rng.randrange(256) for _ in range(rng.choice([720, 720, 100, 0, 3000])))
    if 'encoding: gzip' in fields and rng.random() < 0.7:
        data = gzip.compress(data)[:rng.choice([None, None, 10, 30])]
    return ('NRRD0004\n' + '\n'.join(fields) + '\n\n').encode() + data

def run(cmd, path):
    try:
        p = subprocess.run(cmd, capture_output=True, timeout=30, cwd=work,
                           preexec_fn=lambda: __import__('resource').setrlimit(__import__('resource').RLIMIT_AS, (8 << 30, 8 << 30)))
    except subprocess.TimeoutExpired:
        return 'HANG', b''
    if p.returncode < 0 or p.returncode > 2:
        return 'CRASH rc=%d' % p.returncode, p.stderr[-400:]
    err = p.stderr.decode(errors='replace').strip().splitlines()
    if p.returncode != 0 and len([l for l in err if l.startswith('ndconv: error')]) != 1:
        return 'MESSY rc=%d' % p.returncode, p.stderr[-400:]
    return None, b''


def nifti2(shape=(12, 10, 6), dtype=2, bitpix=8):
    h = bytearray(544)
    struct.pack_into('<i', h, 0, 540)
    h[4:12] = b'n+2\0\r\n\x1a\n'
    struct.pack_into('<2h', h, 12, dtype, bitpix)
    dims = [len(shape)] + list(shape) + [1] * (7 - len(shape))
    struct.pack_into('<8q', h, 16, *dims)
    struct.pack_into('<8d', h, 104, 1, 1, 1, 1, 1, 1, 1, 1)
    struct.pack_into('<q', h, 168, 544)
    struct.pack_into('<d', h, 176, 1.0)
    struct.pack_into('<2i', h, 344, 1, 1)
    struct.pack_into('<4d', h, 400, 1, 0, 0, 0); struct.pack_into('<4d', h, 432, 0, 1, 0, 0); struct.pack_into('<4d', h, 464, 0, 0, 1, 0)
    n = 1
    for x in shape: n *= x
    return bytes(h) + bytes(rng.randrange(256) for _ in range(n * bitpix // 8))

def mutate2(b):
    b = bytearray(b)
    for _ in range(rng.randint(1, 6)):
        i = rng.randrange(0, 536) & ~7
        fmt = rng.choice(['<q', '<d', '<i', '<h'])
        val = rng.choice([0, -1, 1, 2**31, 2**32 + 12, 2**62, -2**63, 7])
        try:
            if fmt == '<d': struct.pack_into(fmt, b, i, rng.choice([float('nan'), float('inf'), 1e300, 5e-324, -0.0, 1.0]))
            elif fmt == '<h': struct.pack_into(fmt, b, i, max(-32768, min(32767, val)))
            elif fmt == '<i': struct.pack_into(fmt, b, i, max(-2**31, min(2**31 - 1, val)))
            else: struct.pack_into(fmt, b, i, val)
        except struct.error:
            pass
    if rng.random() < 0.2: b = b[:rng.randrange(len(b))]
    return bytes(b)

def multi_gzip(b):
    cuts = sorted(rng.sample(range(1, len(b)), min(3, len(b) - 1)))
    parts = [b[i:j] for i, j in zip([0] + cuts, cuts + [len(b)])]
    members = [bytearray(gzip.compress(p)) for p in parts]
    if rng.random() < 0.6:
        m = rng.choice(members)
        for _ in range(rng.randint(1, 3)):
            m[rng.randrange(len(m))] = rng.randrange(256)
    return b''.join(bytes(m) for m in members)

def swapped_nifti():
    b = bytearray(nifti())
    # byte-swap the header's numeric fields we set (ints/shorts/floats) to big-endian
    out = bytearray(b)
    struct.pack_into('>i', out, 0, 348)
    dims = struct.unpack_from('<8h', b, 40); struct.pack_into('>8h', out, 40, *dims)
    struct.pack_into('>2h', out, 70, *struct.unpack_from('<2h', b, 70))
    struct.pack_into('>8f', out, 76, *struct.unpack_from('<8f', b, 76))
    struct.pack_into('>2f', out, 108, *struct.unpack_from('<2f', b, 108))
    struct.pack_into('>2h', out, 252, *struct.unpack_from('<2h', b, 252))
    struct.pack_into('>12f', out, 280, *struct.unpack_from('<12f', b, 280))
    return bytes(out)

t_end = time.time() + SECONDS
count = 0
# a data file beside the headers, and one outside the folder
open(os.path.join(work, 'd.raw'), 'wb').write(bytes(720))
open(os.path.join(work, 'data.raw'), 'wb').write(bytes(720))
while time.time() < t_end:
    kind = rng.choice(['nii', 'niigz', 'mha', 'mhd', 'nrrd', 'nhdr', 'nii2', 'nii2gz', 'multigz', 'swapped', 'pair'])
    if kind in ('nii2', 'nii2gz'):
        b = mutate2(nifti2(dtype=rng.choice([2, 4, 16, 64, 512]), bitpix=rng.choice([8, 16, 32, 64])))
        name = 'f.nii'
        if kind == 'nii2gz':
            b = gzip.compress(b); name = 'f.nii.gz'
    elif kind == 'multigz':
        b = multi_gzip(mutate_bytes(nifti()) if rng.random() < 0.5 else nifti()); name = 'f.nii.gz'
    elif kind == 'swapped':
        b = mutate_bytes(swapped_nifti()); name = 'f.nii'
    elif kind == 'pair':
        full = mutate_bytes(nifti())
        hdr = bytearray(full[:348]); hdr[344:348] = b'ni1\0'
        open(os.path.join(work, 'f.img'), 'wb').write(full[352:][:rng.choice([None, None, 10, 0])])
        b = bytes(hdr); name = 'f.hdr'
    elif kind in ('nii', 'niigz'):
        b = mutate_bytes(nifti(dtype=rng.choice([2, 4, 8, 16, 64, 256, 512, 768]), bitpix=rng.choice([8, 16, 32, 64])))
        name = 'f.nii'
        if kind == 'niigz':
            b = gzip.compress(b)
            if rng.random() < 0.3: b = b[:rng.randrange(len(b))]
            name = 'f.nii.gz'
    elif kind in ('mha', 'mhd'):
        b = mha(); name = 'f.' + kind
    else:
        b = nrrd(); name = 'f.' + kind
    path = os.path.join(work, name)
    open(path, 'wb').write(b)
    for cmd in ([NDCONV, 'info', name], [NDCONV, 'smooth', name, 'o.nii', '--sigma', '1', '--device', 'cpu', '--force'],
                [NDCONV, 'convert', name, 'o.mha', '--force']):
        verdict, err = run(cmd, path)
        count += 1
        if verdict:
            keep = os.path.join('/tmp/fuzz', 'found_%d_%d_%s' % (SEED, len(found), name))
            shutil.copy(path, keep)
            found.append((verdict, ' '.join(cmd[1:2]), keep, err))
            print(verdict, cmd[1], keep, err.decode(errors='replace').replace('\n', ' | ')[:300], flush=True)
print('runs', count, 'found', len(found))
