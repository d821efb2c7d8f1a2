"""``ndconv-dask`` (or ``python -m ndconv.dask``): a cohort of files through ndconv's command line
on a dask.distributed cluster.

    ndconv-dask smooth a.nii.gz b.nii.gz -o smoothed/ -- --sigma 1.5
    ndconv-dask median --list cohort.txt -o 'out/{stem}_m.nrrd' --scheduler tcp://host:8786 \
        -- --radius 1

Everything after ``--`` goes to each task's ``ndconv SUBCOMMAND IN... -o OUT`` unchanged. Exit status as the
command line's: 0 all written, 1 an input failed (each named, then a summary), 2 the command line
is wrong or outputs exist without --force (nothing written), 130 interrupted.
"""

from __future__ import annotations

import argparse
import os
import stat
import sys

from .cohort import CohortError, filter_files


def _read_list(path: str) -> list:
    """A --list file as the command line reads it: a regular file, one path a line, '#' comments
    and blank lines skipped, no NUL bytes."""
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            raise CohortError(f"--list {path} is not a regular file")
        with open(path, encoding="utf-8", errors="surrogateescape") as f:
            text = f.read()
    except OSError as error:
        raise CohortError(f"cannot read --list {path}: {error.strerror}") from None
    if "\0" in text:
        raise CohortError(f"--list {path} holds a NUL byte")
    return [line for line in text.splitlines() if line.strip() and not line.startswith("#")]


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="ndconv-dask",
        description="Filter a cohort of image files with ndconv's command line on a Dask cluster, "
                    "each task a batch of a few files. Options after '--' go to each "
                    "'ndconv SUBCOMMAND IN... -o OUT'.")
    parser.add_argument("subcommand", help="ndconv's subcommand (smooth, median, adaptive, ...)")
    parser.add_argument("inputs", nargs="*", help="input files (or DICOM folders)")
    parser.add_argument("--list", dest="list_file", metavar="FILE",
                        help="a file of input paths, one a line ('#' comments)")
    parser.add_argument("-o", "--output", required=True,
                        help="an existing folder (DIR/) or a name template ({name}, {stem}, {ext})")
    parser.add_argument("--kernel-file", metavar="KERNEL",
                        help="convolve: the kernel image (ndconv convolve IN KERNEL OUT)")
    parser.add_argument("--scheduler", metavar="ADDRESS",
                        help="a dask scheduler's address (default: a LocalCluster on this machine)")
    parser.add_argument("--workers", type=int, metavar="N",
                        help="LocalCluster worker processes (default: one per core)")
    parser.add_argument("--cli", metavar="PATH",
                        help="the ndconv command line to run (default: ndconv on the PATH)")
    parser.add_argument("-f", "--force", action="store_true", help="replace outputs that exist")
    parser.add_argument("--retries", type=int, default=0, metavar="N",
                        help="times a failed file is tried again (default 0)")
    parser.add_argument("--files-per-task", type=int, metavar="N",
                        help="files a task runs as one command line's batch (default: the cohort "
                             "in 2 tasks per worker thread; 1: a command line per file)")
    parser.add_argument("--process-per-task", action="store_true",
                        help="start a command line for each task (default: each worker thread "
                             "keeps one running, 'ndconv serve')")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    return parser


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    options = []
    if "--" in argv:
        cut = argv.index("--")
        argv, options = argv[:cut], argv[cut + 1:]
    args = _parser().parse_args(argv)
    try:
        if args.workers is not None and args.workers < 1:
            raise CohortError("--workers must be at least 1")
        if args.files_per_task is not None and args.files_per_task < 1:
            raise CohortError("--files-per-task must be at least 1")
        inputs = list(args.inputs) + (_read_list(args.list_file) if args.list_file else [])
        result = filter_files([args.subcommand, *options], inputs, args.output,
                              kernel=args.kernel_file, scheduler=args.scheduler,
                              workers=args.workers, force=args.force,
                              cli=args.cli, retries=args.retries,
                              files_per_task=args.files_per_task,
                              persistent=not args.process_per_task,
                              progress=not args.no_progress and sys.stdout.isatty())
    except CohortError as error:
        print(f"ndconv-dask: {error}", file=sys.stderr)
        return 2
    except OSError as error:  # the scheduler cannot be reached, the cluster does not start
        print(f"ndconv-dask: {error}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("ndconv-dask: interrupted; the finished outputs are kept", file=sys.stderr)
        return 130
    for source, reason in result.failed:
        print(f"ndconv-dask: {source}: {reason}", file=sys.stderr)
    print(f"ndconv-dask: {result.summary()}", file=sys.stderr)
    return 0 if result.ok else 1


if __name__ == "__main__":
    sys.exit(main())
