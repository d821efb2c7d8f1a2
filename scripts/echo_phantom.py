#!/usr/bin/env python3
"""Writes an echo-like 4D test sequence as NIfTI-1 (.nii or .nii.gz), with the standard library
only: a smooth phantom (a beating ellipsoidal shell, brighter than the blood pool and the
background) times multiplicative Rayleigh speckle, quantised to 8 bits, so that it compresses
like real echocardiography rather than like uniform noise.

usage: echo_phantom.py OUT.nii[.gz] [NX NY NZ NT] [--seed N]
"""
import array
import gzip
import math
import random
import struct
import sys


def phantom_sequence(nx, ny, nz, nt, seed):
    rng = random.Random(seed)
    data = array.array("B")
    cx, cy, cz = nx / 2, ny / 2, nz / 2
    for t in range(nt):
        beat = 1.0 + 0.12 * math.sin(2 * math.pi * t / max(nt, 1))
        rx, ry, rz = 0.30 * nx * beat, 0.26 * ny * beat, 0.38 * nz
        for z in range(nz):
            dz = ((z - cz) / rz) ** 2
            for y in range(ny):
                dyz = dz + ((y - cy) / ry) ** 2
                row = array.array("B", bytes(nx))
                for x in range(nx):
                    r = math.sqrt(dyz + ((x - cx) / rx) ** 2)
                    # shell around r = 1 (wall), darker blood pool inside, tissue haze outside
                    wall = math.exp(-((r - 1.0) / 0.12) ** 2)
                    mean = 18 + 150 * wall + (10 if r < 1 else 35 * math.exp(-(r - 1.0)))
                    speckle = math.sqrt(-2.0 * math.log(1.0 - rng.random()))  # Rayleigh, sigma 1
                    v = mean * speckle * 0.8
                    row[x] = 255 if v >= 255 else int(v)
                data.extend(row)
    return data


def nifti_header(nx, ny, nz, nt):
    h = bytearray(352)
    struct.pack_into("<i", h, 0, 348)
    struct.pack_into("<8h", h, 40, 4, nx, ny, nz, nt, 1, 1, 1)
    struct.pack_into("<hh", h, 70, 2, 8)  # datatype uint8, bitpix
    struct.pack_into("<8f", h, 76, 1.0, 0.5, 0.5, 0.5, 0.04, 0, 0, 0)  # qfac, mm, 40 ms
    struct.pack_into("<f", h, 108, 352.0)  # vox_offset
    struct.pack_into("<f", h, 112, 1.0)  # scl_slope
    h[123] = 2 | 8  # mm, s
    struct.pack_into("<hh", h, 252, 1, 1)  # qform_code, sform_code
    struct.pack_into("<3f", h, 268, -nx / 4, -ny / 4, -nz / 4)  # qoffset
    struct.pack_into("<4f", h, 280, 0.5, 0, 0, -nx / 4)
    struct.pack_into("<4f", h, 296, 0, 0.5, 0, -ny / 4)
    struct.pack_into("<4f", h, 312, 0, 0, 0.5, -nz / 4)
    h[344:348] = b"n+1\0"
    return bytes(h)


def main(argv):
    args = [a for a in argv[1:] if not a.startswith("--")]
    seed = 1
    if "--seed" in argv:
        seed = int(argv[argv.index("--seed") + 1])
        args.remove(str(seed))
    if not args:
        sys.exit(__doc__)
    out = args[0]
    nx, ny, nz, nt = (int(v) for v in (args[1:5] if len(args) >= 5 else (128, 128, 128, 12)))
    payload = nifti_header(nx, ny, nz, nt) + phantom_sequence(nx, ny, nz, nt, seed).tobytes()
    if out.endswith(".gz"):
        with gzip.open(out, "wb", compresslevel=6) as f:
            f.write(payload)
    else:
        with open(out, "wb") as f:
            f.write(payload)


if __name__ == "__main__":
    main(sys.argv)
