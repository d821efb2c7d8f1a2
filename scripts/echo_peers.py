#!/usr/bin/env python3
"""The same whole-command task run by ndconv, SimpleITK and MRtrix3 side by side: Gaussian
smoothing, sigma 1 mm per frame, of an echo-like 4D uint8 sequence (scripts/echo_phantom.py,
128x128x128x12 by default), float32 output, to .nii.gz and to .nii. Each command is a whole
process (start-up, read, filter, write), timed RUNS times in turn; the median wall time is
printed.

usage: echo_peers.py NDCONV [--runs N] [--folder DIR] [--size NX NY NZ NT]
needs: SimpleITK (pip install SimpleITK) and mrfilter (apt-get install mrtrix3); a peer that is
missing is reported and skipped.
"""
import argparse
import os
import shutil
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))

SIMPLEITK_TASK = r"""
import sys
import SimpleITK as sitk
image = sitk.ReadImage(sys.argv[1], sitk.sitkFloat32)
size = list(image.GetSize())
frames = []
for t in range(size[3]):
    frame = sitk.Extract(image, size[:3] + [0], [0, 0, 0, t])
    frames.append(sitk.SmoothingRecursiveGaussian(frame, 1.0))
out = sitk.JoinSeries(frames, image.GetOrigin()[3], image.GetSpacing()[3])
out.CopyInformation(image)
sitk.WriteImage(out, sys.argv[2], useCompression=sys.argv[2].endswith(".gz"))
"""


def have_simpleitk():
    return subprocess.run([sys.executable, "-c", "import SimpleITK"],
                          capture_output=True).returncode == 0


def commands(ndconv, source, out):
    rows = [("ndconv", [ndconv, "smooth", source, out, "--sigma", "1", "--device", "cpu",
                        "-q", "-f"])]
    if have_simpleitk():
        rows.append(("SimpleITK", [sys.executable, "-c", SIMPLEITK_TASK, source, out]))
    else:
        print("SimpleITK: not installed (pip install SimpleITK); skipped")
    if shutil.which("mrfilter"):
        rows.append(("mrfilter", ["mrfilter", source, "smooth", out, "-stdev", "1",
                                  "-force", "-quiet"]))  # smooth writes float32
    else:
        print("mrfilter: not installed (apt-get install mrtrix3); skipped")
    return rows


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("ndconv")
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--folder", default="/tmp/ndconv_echo_peers")
    p.add_argument("--size", type=int, nargs=4, default=[128, 128, 128, 12])
    a = p.parse_args()
    os.makedirs(a.folder, exist_ok=True)
    source = os.path.join(a.folder, "echo_%dx%dx%dx%d.nii.gz" % tuple(a.size))
    if not os.path.exists(source):
        subprocess.run([sys.executable, os.path.join(HERE, "echo_phantom.py"), source,
                        *map(str, a.size)], check=True)
    print("input: %s (%.1f MB), %d runs each, median wall seconds" %
          (source, os.path.getsize(source) / 1e6, a.runs))
    for ext in (".nii.gz", ".nii"):
        out = os.path.join(a.folder, "out" + ext)
        rows = commands(os.path.abspath(a.ndconv), source, out)
        times = {name: [] for name, _ in rows}
        for run in range(a.runs + 1):  # the first round warms the page cache, not counted
            for name, cmd in rows:
                t0 = time.perf_counter()
                subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
                if run > 0:
                    times[name].append(time.perf_counter() - t0)
        size = os.path.getsize(out) / 1e6
        fastest_peer = min((statistics.median(v) for n, v in times.items() if n != "ndconv"),
                           default=None)
        for name, v in times.items():
            line = "%-8s %-10s %7.2f s" % (ext, name, statistics.median(v))
            if name == "ndconv" and fastest_peer:
                line += "   (fastest peer / ndconv: %.2fx)" % (fastest_peer / statistics.median(v))
            print(line)
        print("%-8s output %.1f MB (last command)" % (ext, size))


if __name__ == "__main__":
    main()
