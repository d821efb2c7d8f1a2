#!/usr/bin/env python3
"""Holds the source folders to their layers (docs/design.md, "Layers").

Every `#include "..."` between two product folders must go down the layer graph below, and the
folder graph must have no loop. Code outside the CUDA backend must not test NDCONV_HAVE_CUDA: a
build without CUDA links the backend's stub instead. Prints each violation and exits 1; run by
CTest (tests/layers/CMakeLists.txt) and by hand as `python3 tests/layers/layers_check.py [ROOT]`.
"""
import os
import re
import sys

# Folder -> the folders its files may include (besides itself). Public API <- core <- {cpu,
# kernels <- cuda} <- engine <- front ends (io, cli, perf, itk, python).
ALLOWED = {
    "src/ndconv": set(),
    "src/core": {"src/ndconv"},
    "src/cpu": {"src/core", "src/ndconv"},
    "kernels": {"src/core"},
    "src/cuda": {"kernels", "src/core", "src/ndconv"},
    "src/engine": {"src/cpu", "src/cuda", "src/core", "src/ndconv"},
    "io": {"src/engine", "src/core", "src/ndconv"},
    # The bench and sweep time the backends' own entry points (cuda/launch.h, the CPU drivers).
    "src/perf": {"src/engine", "src/cpu", "src/cuda", "src/core", "src/ndconv"},
    "src/itk": {"src/ndconv"},
    "src/cli": {"io", "src/perf", "src/engine", "src/core", "src/ndconv"},
    "python": {"io", "src/engine", "src/core", "src/ndconv"},
}
# Where NDCONV_HAVE_CUDA may appear: the CUDA backend (which owns the stub) and the build files.
CUDA_SWITCH_ALLOWED = ("src/cuda/",)
SOURCE_SUFFIXES = (".h", ".hpp", ".cpp", ".cu", ".cuh", ".hxx", ".cc")
INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"', re.M)


def folder_of(path):
    """The product folder of a path relative to the root, or None (tests, dev, scripts)."""
    best = None
    for f in ALLOWED:
        if path == f or path.startswith(f + "/"):
            if best is None or len(f) > len(best):
                best = f
    return best


def resolve(root, including_file, name):
    """The file an include names, searched as the build does: beside the file, then the roots."""
    for base in (os.path.dirname(including_file), "src", ""):
        candidate = os.path.normpath(os.path.join(base, name))
        if os.path.isfile(os.path.join(root, candidate)):
            return candidate
    return None


def find_loops(edges):
    """Strongly connected components of more than one folder (Tarjan)."""
    index, low, stack, on_stack, loops, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in edges.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                loops.append(sorted(component))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return loops


def main():
    root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else
                           os.path.join(os.path.dirname(__file__), "..", ".."))
    problems, edges, files = [], {}, 0
    for top in ("src", "io", "kernels", "python"):
        for dirpath, _, names in os.walk(os.path.join(root, top)):
            for name in sorted(names):
                if not name.endswith(SOURCE_SUFFIXES):
                    continue
                path = os.path.relpath(os.path.join(dirpath, name), root)
                source_folder = folder_of(path)
                if source_folder is None:
                    continue
                files += 1
                with open(os.path.join(root, path), encoding="utf-8", errors="replace") as f:
                    text = f.read()
                if "NDCONV_HAVE_CUDA" in text and not path.startswith(CUDA_SWITCH_ALLOWED):
                    problems.append(f"{path}: tests NDCONV_HAVE_CUDA outside the CUDA backend")
                for match in INCLUDE.finditer(text):
                    target = resolve(root, path, match.group(1))
                    target_folder = folder_of(target) if target else None
                    if target_folder is None or target_folder == source_folder:
                        continue
                    edges.setdefault(source_folder, set()).add(target_folder)
                    if target_folder not in ALLOWED[source_folder]:
                        problems.append(f"{path}: includes {target} ({source_folder} may not "
                                        f"depend on {target_folder})")
    for loop in find_loops(edges):
        problems.append("folders include each other: " + " <-> ".join(loop))
    if files == 0:
        problems.append(f"no source files found under {root}")
    for p in problems:
        print(p)
    print(f"layers: {files} files checked, {len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
