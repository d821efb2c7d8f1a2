"""Cohorts: many image files filtered the same way on a dask.distributed cluster, each task
running ndconv's command line on a few of them (its batch), so that every output is the command
line's own, byte for byte.

Safety (the command line's rules, kept across workers): outputs that exist are refused before any
work unless ``force``; each task writes into its own staging folder inside the output folder and
links the finished files into place without replacing one (``force``: renames over it), so an
output appears whole or not at all; a task whose worker dies is run again by the scheduler (its
command line dies with its worker); the staging folder is removed at the end; failures are named
in the result.

Each worker thread keeps one command line running (``ndconv serve``: commands sent on its standard
input, run one after the other in that process), so that a worker starts the program, its
libraries and CUDA once rather than once per task; ``persistent=False`` runs a command line per
task instead.
"""

from __future__ import annotations

import ctypes
import filecmp
import math
import os
import shutil
import signal
import subprocess
import tempfile
import threading
import uuid
from dataclasses import dataclass, field
from pathlib import Path

# The image extensions of the command line's {stem} / {ext} placeholders (docs/cli.md#batches),
# longest first so that '.nii.gz' wins over '.gz'.
_IMAGE_EXTENSIONS = sorted(
    (".nii.gz", ".nii", ".hdr", ".img", ".hdr.gz", ".img.gz", ".mha", ".mhd", ".nrrd", ".nhdr",
     ".seq.nrrd", ".png", ".jpg", ".jpeg", ".tif", ".tiff", ".bmp", ".dcm"),
    key=len, reverse=True)


class CohortError(ValueError):
    """The cohort cannot start: a wrong output, outputs that exist, two inputs with one output,
    no command line found. Nothing was written."""


@dataclass
class CohortResult:
    """What a cohort run did: the outputs written, and each failed input with the reason."""

    written: list = field(default_factory=list)
    failed: list = field(default_factory=list)  # (input, message)

    @property
    def ok(self) -> bool:
        return not self.failed

    def summary(self) -> str:
        total = len(self.written) + len(self.failed)
        if not self.failed:
            return f"{total} inputs written"
        if not self.written:
            return f"all {total} inputs failed (named above); nothing was written"
        return f"{len(self.failed)} of {total} inputs failed (named above); the others were written"


def find_cli(cli=None) -> str:
    """The ndconv command line the tasks run: `cli` where given (a path), else ``ndconv`` on the
    PATH. Every worker must see it at the same path (a shared file system or the same install)."""
    if cli is not None:
        path = Path(cli)
        if not (path.is_file() and os.access(path, os.X_OK)):
            raise CohortError(f"the ndconv command line {cli} is not an executable file")
        return str(path.resolve())
    found = shutil.which("ndconv")
    if found is None:
        raise CohortError("no ndconv command line on the PATH; pass cli= (--cli), e.g. the build's "
                          "build/src/cli/ndconv or the installed PREFIX/bin/ndconv")
    return str(Path(found).resolve())


def _split_extension(name: str):
    lower = name.lower()
    for ext in _IMAGE_EXTENSIONS:
        if lower.endswith(ext) and len(name) > len(ext):
            return name[:-len(ext)], name[-len(ext):]
    return name, ""


def output_path(output, input) -> Path:
    """The output of `input` under `output`, by the command line's rule: a folder (``DIR/`` or an
    existing ``DIR``) takes the input's file name; otherwise `output` is a template whose file
    name may hold {name}, {stem} and {ext}."""
    output = os.fspath(output)
    name = Path(os.fspath(input).rstrip("/")).name
    if output.endswith("/") or Path(output).is_dir():
        return Path(output) / name
    folder, template = os.path.split(output)
    stem, ext = _split_extension(name)
    try:
        filename = template.format_map({"name": name, "stem": stem, "ext": ext})
    except (KeyError, ValueError, IndexError) as error:
        raise CohortError(f"bad output template {template!r}: only {{name}}, {{stem}} and {{ext}} "
                          f"are placeholders ({error})") from None
    if filename == template:
        raise CohortError(f"the output {output!r} is neither a folder (end it with '/') nor a "
                          f"template with {{name}} or {{stem}}")
    return Path(folder) / filename


def plan_outputs(inputs, output, force: bool) -> list:
    """(input, output path) per input, refused as the command line refuses them before any work:
    a missing output folder, two inputs with one output, outputs that exist without `force`."""
    pairs = [(os.fspath(i), output_path(output, i)) for i in inputs]
    if not pairs:
        raise CohortError("no inputs")
    folders = {p.parent for _, p in pairs}
    for folder in folders:
        if not folder.is_dir():
            raise CohortError(f"the output folder {folder} does not exist")
    seen = {}
    for source, target in pairs:
        if target in seen:
            raise CohortError(f"{seen[target]} and {source} would both write {target}")
        seen[target] = source
    if not force:
        existing = [str(t) for _, t in pairs if os.path.lexists(t)]
        if existing:
            raise CohortError(f"{len(existing)} outputs exist (use force to replace them): "
                              f"{', '.join(existing[:5])}{' ...' if len(existing) > 5 else ''}")
    return pairs


# ---- one task -----------------------------------------------------------------------------------

_PR_SET_PDEATHSIG = 1


def _die_with_parent_hook():
    """A pre-exec hook that makes the command line die with the worker that started it (Linux),
    so that a killed worker leaves no command line writing into its staging folder."""
    try:
        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None

    def hook():
        prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)

    return hook


# ---- command lines kept running: ``ndconv serve`` (docs/cli.md#serve) -------------------------

# The idle servers of this worker process, by command line path: a task takes one (or starts
# one), sends its command and gives the server back once answered.
_idle_servers: dict = {}
_servers_lock = threading.Lock()


class _ServerEnded(Exception):
    pass


def _take_server(cli: str):
    with _servers_lock:
        idle = _idle_servers.setdefault(cli, [])
        while idle:
            server = idle.pop()
            if server.poll() is None:
                return server
    return subprocess.Popen([cli, "serve"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, preexec_fn=_die_with_parent_hook())


def _request(args) -> bytes:
    parts = [f"{len(args)}\n".encode()]
    for arg in args:
        data = os.fsencode(arg)
        parts += [f"{len(data)}\n".encode(), data, b"\n"]
    return b"".join(parts)


def _run_served(cli: str, args) -> subprocess.CompletedProcess:
    """``cli ARGS...`` run by a kept server: its exit code and what it printed (as stderr)."""
    server = _take_server(cli)
    try:
        server.stdin.write(_request(args))
        server.stdin.flush()
        header = server.stdout.readline().split()
        if len(header) != 3 or header[0] != b"ndconv-serve":
            raise _ServerEnded
        code, length = int(header[1]), int(header[2])
        printed = server.stdout.read(length)
        if len(printed) != length:
            raise _ServerEnded
    except (OSError, ValueError, _ServerEnded):
        server.kill()
        status = server.wait()
        return subprocess.CompletedProcess(
            [cli, *args], status if status != 0 else 1, "",
            f"ndconv: error: the command line (ndconv serve) ended during the task (exit status "
            f"{status})")
    with _servers_lock:
        _idle_servers.setdefault(cli, []).append(server)
    return subprocess.CompletedProcess([cli, *args], code, "",
                                       printed.decode(errors="replace"))


def _place(staged: Path, target: Path, force: bool) -> None:
    """Moves a finished file into place: never over a file without `force`. A file already there
    with the same bytes is this task's own, placed by a run of it whose worker died afterwards."""
    if force:
        os.replace(staged, target)
        return
    try:
        os.link(staged, target)
    except FileExistsError:
        if not filecmp.cmp(staged, target, shallow=False):
            raise FileExistsError(f"{target} appeared while the cohort ran; not replaced") from None
    os.unlink(staged)


def _reason(done, source: str, staged: Path) -> str:
    """Why the command line wrote no output for `source`: its error line that names the input or
    the staged output (a batch names each failed input), else its last line."""
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    named = [line for line in lines if source in line or str(staged) in line]
    reason = (named or lines or [f"exit status {done.returncode}"])[-1]
    return f"{reason} (exit {done.returncode})"


def filter_group(cli: str, command, jobs, kernel, output_name, staging_root: str,
                 force: bool, persistent: bool = False):
    """Runs one command line on the inputs of `jobs` ((source, target) pairs; one input: ``cli
    SUBCOMMAND SOURCE [KERNEL] <staged> OPTIONS``, several: the command line's batch ``cli
    SUBCOMMAND SOURCES... [KERNEL] -o <staging>/[output_name] OPTIONS`` (`output_name`: the name
    template, None for a folder), which starts CUDA and
    designs the filter once and overlaps reading, filtering and writing across the files), and
    moves what it wrote into place; with `persistent` the worker thread's kept ``ndconv serve``
    runs it. Returns (source, target, None or why it failed) per job."""
    attempt = Path(tempfile.mkdtemp(prefix="task-", dir=staging_root))
    try:
        staged = [attempt / Path(target).name for _, target in jobs]
        sources = [source for source, _ in jobs]
        kernel_arg = [kernel] if kernel else []
        if len(jobs) == 1:
            argv = [cli, command[0], *sources, *kernel_arg, str(staged[0]), *command[1:]]
        else:
            argv = [cli, command[0], *sources, *kernel_arg, "-o",
                    str(attempt / output_name) if output_name else f"{attempt}/", *command[1:]]
        if persistent:
            done = _run_served(cli, argv[1:])
        else:
            done = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                                  errors="replace", preexec_fn=_die_with_parent_hook())
        outputs = set(staged)
        # Companion data files (.raw of .mhd, .img of .hdr) first, the named outputs last.
        for companion in sorted(p for p in attempt.iterdir() if p not in outputs):
            _place(companion, Path(jobs[0][1]).parent / companion.name, force)
        results = []
        for (source, target), file in zip(jobs, staged):
            if not file.exists():
                reason = (_reason(done, source, file) if done.returncode != 0 else
                          "the command line wrote no output")
                results.append((source, target, reason))
                continue
            try:
                _place(file, Path(target), force)
                results.append((source, target, None))
            except OSError as error:
                results.append((source, target, str(error)))
        return results
    except OSError as error:
        return [(source, target, str(error)) for source, target in jobs]
    finally:
        shutil.rmtree(attempt, ignore_errors=True)


# Tasks per worker thread when filter_files groups the files itself: each task pays a command
# line's start-up (CUDA's, the filter's design) once for its files, and two per thread still let a
# fast worker take over a slow one's share at the end.
TASKS_PER_WORKER_THREAD = 2


def default_files_per_task(files: int, worker_threads: int) -> int:
    """The files of one task by default: the cohort in TASKS_PER_WORKER_THREAD tasks per worker
    thread."""
    return max(1, math.ceil(files / (TASKS_PER_WORKER_THREAD * max(1, worker_threads))))


# Options that name files of their own, which one command per file cannot share.
_PER_RUN_OPTIONS = ("-o", "--output", "--list", "--preview")


def _check_command(command) -> list:
    command = [str(c) for c in command]
    if not command or command[0].startswith("-"):
        raise CohortError("the command must start with ndconv's subcommand (e.g. 'smooth')")
    for option in command[1:]:
        if option.split("=", 1)[0] in _PER_RUN_OPTIONS:
            raise CohortError(f"{option} names a file of its own; a cohort takes its inputs and "
                              f"outputs from filter_files (ndconv-dask) itself")
    return command


# ---- the cohort ---------------------------------------------------------------------------------


def filter_files(command, inputs, output, *, kernel=None, client=None, scheduler=None,
                 workers=None, force=False, cli=None, progress=False,
                 retries=0, files_per_task=None, persistent=True) -> CohortResult:
    """Filters each input file with ndconv's command line on a dask.distributed cluster.

    Parameters
    ----------
    command : sequence of str
        The subcommand and its options, as after ``ndconv``: ``["smooth", "--sigma", "1.5"]``
        (every subcommand that takes IN OUT; no input or output in it).
    inputs : sequence of path
        The input files (or DICOM folders).
    output : path
        A folder (``"DIR/"``, which must exist) or a name template (``"DIR/{stem}_s.nii.gz"``), as
        the command line's ``-o``.
    kernel : path, optional
        ``convolve``'s kernel image (``ndconv convolve IN KERNEL OUT``), the same for every input.
    client : distributed.Client, optional
        The cluster to run on (LocalCluster, LocalCUDACluster, SLURMCluster, ... clients).
    scheduler : str, optional
        Instead of `client`: a scheduler's address. Neither: a LocalCluster of `workers` worker
        processes of one thread (default: one per core), closed at the end.
    force : bool
        Replace outputs that exist (the command line's ``--force``).
    cli : path, optional
        The command line to run (:func:`find_cli`).
    progress : bool
        Show dask's progress bar (in a terminal or a notebook).
    retries : int
        Times a failed task is tried again (a task whose worker died is always run again).
    files_per_task : int, optional
        Files per task: one command runs them as its batch. Default: the cohort in
        ``TASKS_PER_WORKER_THREAD`` (2) tasks per worker thread
        (:func:`default_files_per_task`); 1 gives one command per file.
    persistent : bool
        Each worker thread keeps one command line running (``ndconv serve``) and sends it its
        tasks, so that the program, its libraries and CUDA start once per worker thread, not once
        per task (default); False: a command line per task.

    Returns
    -------
    CohortResult
        The outputs written and the inputs that failed, with why.

    Raises
    ------
    CohortError
        Before any work, as the command line refuses a batch (nothing is written).
    """
    from distributed import Client, LocalCluster, wait
    from distributed.diagnostics.progressbar import progress as show_progress

    command = _check_command(command)
    executable = find_cli(cli)
    if kernel is not None:
        kernel = os.path.abspath(os.fspath(kernel))
    if files_per_task is not None and files_per_task < 1:
        raise CohortError("files_per_task must be at least 1")
    pairs = plan_outputs(inputs, output, force)
    # Every output is in one folder (output_path); the tasks stage their files beside them.
    staging_root = pairs[0][1].parent / f".ndconv-dask-{uuid.uuid4().hex}"
    staging_root.mkdir()
    to_close = []  # what this call started, closed at the end
    futures = []
    try:
        if client is None:
            if scheduler is None:
                workers = workers or os.cpu_count() or 1
                cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                                       dashboard_address=None)
                to_close.append(cluster)
                scheduler = cluster
            client = Client(scheduler)
            to_close.insert(0, client)
        if files_per_task is None:
            files_per_task = default_files_per_task(len(pairs), sum(client.nthreads().values()))
        is_folder = str(output).endswith("/") or Path(output).is_dir()
        output_name = None if is_folder else os.path.split(os.fspath(output))[1]
        # Absolute paths: a worker's working folder is not the caller's.
        jobs = [(os.path.abspath(source), os.path.abspath(target)) for source, target in pairs]
        starts = range(0, len(jobs), files_per_task)
        futures = [client.submit(filter_group, executable, command,
                                 jobs[start:start + files_per_task], kernel, output_name,
                                 os.path.abspath(staging_root), force, persistent, pure=False,
                                 retries=retries, key=f"ndconv-{start}-{uuid.uuid4().hex}")
                   for start in starts]
        if progress:
            show_progress(futures)
        wait(futures)
        result = CohortResult()
        for start, future in zip(starts, futures):
            group = pairs[start:start + files_per_task]
            if future.status == "finished":
                reasons = [reason for _, _, reason in future.result()]
            else:
                reasons = [f"the task failed: {future.exception()!r}"] * len(group)
            for (source, target), reason in zip(group, reasons):
                if reason is None:
                    result.written.append(target)
                else:
                    result.failed.append((source, reason))
        return result
    finally:
        unfinished = [f for f in futures if not f.done()]
        if unfinished:  # interrupted: no task of this run starts any more
            client.cancel(unfinished)
        for thing in to_close:
            thing.close()
        shutil.rmtree(staging_root, ignore_errors=True)
