#!/usr/bin/env python3
"""ndconv against the tools a user would reach for, on the same whole task, side by side on the
same machine: Gaussian smoothing (sigma 1 mm, each frame of a 4D sequence on its own) of an
echo-like 128x128x128x12 uint8 .nii.gz, float32 output, written as .nii.gz and as .nii.

Peers (a peer that is not installed is skipped with a message):
  SimpleITK  SmoothingRecursiveGaussian per frame, WriteImage(useCompression=True for .nii.gz),
             run as `python3 -c ...` so that its start-up counts as ndconv's does
             (install: pip install SimpleITK)
  MRtrix3    mrfilter IN smooth OUT -stdev 1 (its smooth filter writes float32; its kernel is
             truncated at 2.5 sigma; install: apt-get install -y mrtrix3)
  ndconv     ndconv smooth IN OUT --sigma 1 --device cpu --type float

Every command is a child process timed by the wall clock: one untimed run each (page cache warm),
then --reps rounds in which every command runs once in turn, median per command. The input is
made here (numpy): the same kind of phantom as `ndconv bench`'s e2e rows (src/perf/phantom.cpp),
a pyramidal sector with a beating ellipsoidal shell times Rayleigh speckle, quantised to 8 bits,
written as one gzip stream at zlib level 6. Each peer's .nii output is compared with ndconv's
(relative L2 difference, informational: the recursive Gaussian and ndconv's truncated FIR differ
slightly) when SimpleITK is there to read it.

usage: scripts/peers_io.py --ndconv build/src/cli/ndconv [--reps 3] [--shape 128x128x128x12]
       [--json peers_io.json] [--work DIR]
needs: python3 with numpy (pip install numpy)
"""
import argparse
import datetime
import gzip
import json
import os
import platform
import shutil
import statistics
import struct
import subprocess
import sys
import tempfile
import time

SIMPLEITK_SMOOTH = r"""
import sys
import SimpleITK as sitk
src, dst, sigma, compress = sys.argv[1], sys.argv[2], float(sys.argv[3]), sys.argv[4] == "1"
image = sitk.ReadImage(src, sitk.sitkFloat32)
size = list(image.GetSize())
frames = []
for t in range(size[3]):
    frame = sitk.Extract(image, size[:3] + [0], [0, 0, 0, t])
    frames.append(sitk.SmoothingRecursiveGaussian(frame, sigma))
out = sitk.JoinSeries(frames, image.GetOrigin()[3], image.GetSpacing()[3])
sitk.WriteImage(out, dst, useCompression=compress)
"""


def echo_sequence(shape, seed):
    """The echo-like phantom, x fastest in memory: an array of shape (t, z, y, x), uint8."""
    import numpy as np

    nx, ny, nz, nt = shape
    rng = np.random.default_rng(seed)
    x = (2.0 * (np.arange(nx) + 0.5) / nx - 1.0)[None, None, :]
    y = (2.0 * (np.arange(ny) + 0.5) / ny - 1.0)[None, :, None]
    depth = ((np.arange(nz) + 0.5) / nz)[:, None, None]
    half_width = 0.15 + depth
    sector = (np.abs(x) <= half_width) & (np.abs(y) <= half_width) & (depth >= 0.04)
    out = np.empty((nt, nz, ny, nx), dtype=np.uint8)
    weights = np.array([1.0, 2.0, 1.0]) / 4.0
    scale = 1.0 / ((6.0 / 16.0) * np.sqrt(np.pi / 2.0))
    for t in range(nt):
        beat = 1.0 + 0.12 * np.sin(2.0 * np.pi * t / nt)
        cx, cy, cz = x / (0.38 * beat), y / (0.34 * beat), (depth - 0.55) / (0.36 * beat)
        r = np.sqrt(cx * cx + cy * cy + cz * cz)
        shell = np.exp(-(((r - 1.14) / 0.14) ** 4))
        base = np.where(r < 1.0, 0.06, 0.25)
        amplitude = np.minimum(1.0, (1.0 - 0.35 * depth) * np.maximum(base, shell)) * sector
        # Speckle: a complex Gaussian field smoothed in each slice by a 3x3 binomial filter; its
        # magnitude is Rayleigh distributed, scaled to mean 1.
        field = rng.standard_normal((2, nz, ny + 2, nx + 2))
        field = sum(w * field[:, :, :, i:i + nx] for i, w in enumerate(weights))
        field = sum(w * field[:, :, i:i + ny, :] for i, w in enumerate(weights))
        speckle = np.hypot(field[0], field[1]) * scale
        out[t] = np.minimum(255.0, np.rint(120.0 * amplitude * speckle)).astype(np.uint8)
    return out


def nifti1_header(shape, spacing, datatype=2, bitpix=8):
    """A NIfTI-1 single-file header and empty extension flag (352 bytes), identity orientation."""
    h = bytearray(352)
    struct.pack_into("<i", h, 0, 348)
    h[38] = ord("r")
    struct.pack_into("<8h", h, 40, len(shape), *shape, *([1] * (7 - len(shape))))
    struct.pack_into("<hh", h, 70, datatype, bitpix)
    struct.pack_into("<8f", h, 76, 1.0, *spacing, *([1.0] * (7 - len(spacing))))
    struct.pack_into("<ff", h, 108, 352.0, 1.0)  # vox_offset, scl_slope
    h[123] = 2 | 8  # mm, s
    struct.pack_into("<hh", h, 252, 1, 1)  # qform_code, sform_code
    for row in range(3):
        struct.pack_into("<f", h, 280 + 16 * row + 4 * row, spacing[row])
    h[344:348] = b"n+1\0"
    return bytes(h)


def run(cmd):
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    seconds = time.perf_counter() - t0
    if proc.returncode != 0:
        tail = proc.stdout.decode(errors="replace").strip().splitlines()[-3:]
        raise RuntimeError(f"{' '.join(cmd)}: exit code {proc.returncode}: {' | '.join(tail)}")
    return seconds


def rel_l2(a_path, b_path):
    try:
        import numpy as np
        import SimpleITK as sitk
    except ImportError:
        return None
    a = sitk.GetArrayFromImage(sitk.ReadImage(a_path, sitk.sitkFloat64))
    b = sitk.GetArrayFromImage(sitk.ReadImage(b_path, sitk.sitkFloat64))
    if a.shape != b.shape:
        return float("inf")
    return float(np.linalg.norm(a - b) / np.linalg.norm(b))


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ndconv", required=True, help="the ndconv binary")
    ap.add_argument("--reps", type=int, default=3, help="timed rounds (3)")
    ap.add_argument("--shape", default="128x128x128x12", help="x, y, z, t extents")
    ap.add_argument("--sigma", type=float, default=1.0, help="Gaussian sigma in mm (1)")
    ap.add_argument("--json", default="", help="also write everything measured here")
    ap.add_argument("--work", default="", help="folder for the files (default: a temporary one)")
    args = ap.parse_args()
    try:
        import numpy  # noqa: F401
    except ImportError:
        sys.exit("peers_io.py: needs numpy to make the input (pip install numpy)")
    shape = [int(v) for v in args.shape.split("x")]
    if len(shape) != 4 or min(shape) < 1:
        sys.exit("peers_io.py: --shape needs four positive extents, e.g. 128x128x128x12")
    ndconv = os.path.abspath(args.ndconv)
    if not os.access(ndconv, os.X_OK):
        sys.exit(f"peers_io.py: {args.ndconv} is not an executable")

    work = args.work or tempfile.mkdtemp(prefix="ndconv-peers-")
    os.makedirs(work, exist_ok=True)
    src = os.path.join(work, "echo.nii.gz")
    data = echo_sequence(shape, seed=1)
    with gzip.open(src, "wb", compresslevel=6) as f:
        f.write(nifti1_header(shape, [1.0, 1.0, 1.0, 0.04]))
        f.write(data.tobytes())
    print(f"input: {src}, {args.shape} uint8, {os.path.getsize(src) / 1e6:.1f} MB "
          f"(gzip ratio {data.nbytes / os.path.getsize(src):.2f})", flush=True)

    peers = {}
    try:
        import SimpleITK as sitk
        peers["SimpleITK"] = (f"SimpleITK {sitk.Version.VersionString()}",
                              lambda i, o: [sys.executable, "-c", SIMPLEITK_SMOOTH, i, o,
                                            str(args.sigma), "1" if o.endswith(".gz") else "0"])
    except ImportError:
        print("skipping SimpleITK: not installed (pip install SimpleITK)")
    if shutil.which("mrfilter"):
        version = subprocess.run(["mrfilter", "-version"], stdout=subprocess.PIPE,
                                 stderr=subprocess.STDOUT).stdout.decode().splitlines()[0]
        peers["mrfilter"] = (version.strip("= "), lambda i, o: [
            "mrfilter", i, "smooth", o, "-stdev", str(args.sigma), "-force", "-quiet"])
    else:
        print("skipping MRtrix3: mrfilter not found (apt-get install -y mrtrix3)")
    version = subprocess.run([ndconv, "--version"], stdout=subprocess.PIPE).stdout.decode()
    peers["ndconv"] = (version.splitlines()[0] if version else "ndconv", lambda i, o: [
        ndconv, "smooth", i, o, "--sigma", str(args.sigma), "--device", "cpu", "--type", "float",
        "-q", "--force"])

    results = {}
    for ext in (".nii.gz", ".nii"):
        commands = {name: make(src, os.path.join(work, f"{name}{ext}"))
                    for name, (_, make) in peers.items()}
        samples = {name: [] for name in commands}
        errors = {}
        for name, cmd in commands.items():  # untimed: page cache and start-up warm
            try:
                run(cmd)
            except RuntimeError as e:
                errors[name] = str(e)
                print(f"{name} failed: {e}")
        for _ in range(args.reps):
            for name, cmd in commands.items():
                if name not in errors:
                    samples[name].append(run(cmd))
        results[ext] = {name: {"command": " ".join(commands[name][:2] if name == "SimpleITK"
                                                    else commands[name]),
                               "samples_s": samples[name],
                               "median_s": statistics.median(samples[name]) if samples[name]
                               else None,
                               "error": errors.get(name)} for name in commands}
        if ext == ".nii":
            for name in commands:
                if name not in errors:
                    with open(os.path.join(work, f"{name}{ext}"), "rb") as f:
                        datatype = struct.unpack_from("<h", f.read(72), 70)[0]
                    results[ext][name]["output_type"] = {16: "float32"}.get(datatype, datatype)
                    if datatype != 16:
                        print(f"warning: {name} wrote NIfTI datatype {datatype}, not float32")
            for name in commands:
                if name != "ndconv" and name not in errors and "ndconv" not in errors:
                    results[ext][name]["rel_l2_vs_ndconv"] = rel_l2(
                        os.path.join(work, f"{name}{ext}"), os.path.join(work, f"ndconv{ext}"))

    print(f"\n{args.shape} uint8 echo-like .nii.gz -> Gaussian sigma {args.sigma} mm per frame -> "
          f"float32; wall clock, median of {args.reps}; {os.cpu_count()} CPUs "
          f"({platform.processor() or platform.machine()})")
    names = list(peers)
    print(f"{'output':<8}" + "".join(f"{n:>12}" for n in names) +
          f"{'faster peer / ndconv':>24}")
    for ext, r in results.items():
        cells = "".join(f"{r[n]['median_s']:>11.2f}s" if r[n]["median_s"] else f"{'failed':>12}"
                        for n in names)
        others = [r[n]["median_s"] for n in names if n != "ndconv" and r[n]["median_s"]]
        speed = (f"{min(others) / r['ndconv']['median_s']:>23.2f}x"
                 if others and r["ndconv"]["median_s"] else f"{'-':>24}")
        print(f"{ext:<8}{cells}{speed}")
    for name in names:
        if name != "ndconv" and results[".nii"][name].get("rel_l2_vs_ndconv") is not None:
            print(f"{name} .nii output vs ndconv's: relative L2 difference "
                  f"{results['.nii'][name]['rel_l2_vs_ndconv']:.2e}")
    print("faster peer / ndconv > 1: ndconv is that many times faster (target: >= 3 for .nii.gz)")

    if args.json:
        with open(args.json, "w") as f:
            json.dump({"tool": "scripts/peers_io.py",
                       "date": datetime.datetime.now(datetime.timezone.utc).isoformat(),
                       "machine": {"cpus": os.cpu_count(), "platform": platform.platform(),
                                   "load_average": os.getloadavg()},
                       "task": {"shape": args.shape, "sigma_mm": args.sigma, "input": "uint8 .nii.gz",
                                "output": "float32", "reps": args.reps},
                       "versions": {n: v for n, (v, _) in peers.items()},
                       "results": results}, f, indent=2)
        print(f"wrote {args.json}")
    if not args.work:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
