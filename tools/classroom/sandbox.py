"""Each submission apart: the student's code runs in its own unprivileged process, the tests in
the grader's (:mod:`tools.classroom.grading`), and only data crosses between them.

The design is PrairieLearn's Python grader's (student code in a separate, unprivileged
subprocess with a timeout, talking to the tests over a pipe) with otter-grader's per-submission
container replaced by what a plain Linux or macOS machine offers without Docker:

* a process of its own (:class:`Student`, running ``student_side.py``) in a new session, killed
  with everything it started when the submission is done or a limit is reached: the grader
  becomes a child subreaper (Linux), so that processes the notebook detaches come back to it;
* limits (:class:`Limits`): wall-clock time (the grader's clock), CPU time, address space,
  processes, size of a written file, open files (``setrlimit``);
* a throwaway working folder and home, removed afterwards; nothing of the grader's in them (no
  tests, no autograder);
* no network: a new, empty network namespace (Linux; as root, or with user namespaces);
* lower privileges when the grader runs as root: the user ``nobody`` (``setuid``), so that the
  notebook can write only in its folder and in world-writable places such as ``/tmp``, and read
  only what every user may read;
* nothing the process says is trusted: each reply is size-limited JSON, decoded by
  :func:`decode` into plain values (no ``pickle``), NumPy arrays of numeric types and PyTorch
  tensors; a callable becomes a :class:`RemoteCallable`, called through the pipe.
"""
from __future__ import annotations

import base64
import ctypes
import ctypes.util
import functools
import json
import math
import os
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from tools.bookmeta import ROOT

try:  # POSIX only: grading untrusted notebooks needs Linux or macOS
    import pwd
    import resource
except ImportError:  # Windows: Student refuses to start
    pwd = resource = None

STUDENT_SIDE = Path(__file__).resolve().with_name("student_side.py")
SANDBOX_USER = "nobody"
CLONE_NEWNS, CLONE_NEWUSER, CLONE_NEWNET = 0x20000, 0x10000000, 0x40000000
MS_NOSUID, MS_NODEV, MS_BIND, MS_REC, MS_PRIVATE = 2, 4, 4096, 16384, 1 << 18
PR_SET_CHILD_SUBREAPER = 36
ARRAY_KINDS = "biufc"  # bool, signed, unsigned, float, complex: never object arrays
MAX_DEPTH = 32


@dataclass(frozen=True)
class Limits:
    """What one submission may use. ``wall_s`` counts from its start to its last test."""

    wall_s: float = 600.0
    cpu_s: int = 600
    memory_mb: int = 4096
    processes: int = 64
    file_mb: int = 64
    open_files: int = 256
    notebook_mb: int = 20
    reply_mb: int = 64

    def describe(self) -> str:
        return (f"{self.wall_s:g} s wall clock, {self.cpu_s} s CPU, {self.memory_mb} MB memory, "
                f"{self.processes} processes")


class SubmissionError(Exception):
    """The submission as a whole cannot be graded (not a notebook, a limit reached, ...); the
    message names why, for the report."""


class LimitReached(SubmissionError):
    """The student's process reached a limit or ended; it has been killed."""


# ---------------------------------------------------------------------------- the notebook
def read_cells(path: Path, limits: Limits) -> list[str]:
    """The code cells of the notebook at ``path``, checked as untrusted input."""
    try:
        size = path.stat().st_size
    except OSError as e:
        raise SubmissionError(f"cannot read the file: {e.strerror}") from None
    if size > limits.notebook_mb * 2 ** 20:
        raise SubmissionError(f"the file is {size / 2 ** 20:.0f} MB, more than the "
                              f"{limits.notebook_mb} MB a notebook may have")
    try:
        nb = json.loads(path.read_bytes().decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as e:
        raise SubmissionError(f"not a notebook: the file is not valid JSON ({e})"[:300]) from None
    if not isinstance(nb, dict) or not isinstance(nb.get("cells"), list):
        raise SubmissionError("not a notebook: no list of cells (nbformat 4)")
    meta = nb.get("metadata") if isinstance(nb.get("metadata"), dict) else {}
    kernel = meta.get("kernelspec") if isinstance(meta.get("kernelspec"), dict) else {}
    language = kernel.get("language") or (meta.get("language_info") or {}).get("name")
    if isinstance(language, str) and language.lower() != "python":
        raise SubmissionError(f"the notebook's kernel is {language!r}, not Python")
    cells = []
    for cell in nb["cells"]:
        if isinstance(cell, dict) and cell.get("cell_type") == "code":
            src = cell.get("source", "")
            src = "".join(src) if isinstance(src, list) else src
            if isinstance(src, str):
                cells.append(src)
    if not cells:
        raise SubmissionError("the notebook has no code cells")
    return cells


# ---------------------------------------------------------------------------- the process
@functools.cache
def sandbox_ids() -> tuple[int, int] | None:
    """``(uid, gid)`` to run student code as: ``nobody`` when the grader is root (and, where
    Python lies in a folder other users cannot enter, a private mount namespace can show it to
    ``nobody``), else ``None``: the grader's own user."""
    if pwd is None or os.getuid() != 0:
        return None
    try:
        entry = pwd.getpwnam(SANDBOX_USER)
    except KeyError:
        return None
    if mount_plan(needed_paths(Path(tempfile.gettempdir()))) and not mount_isolation():
        return None
    return entry.pw_uid, entry.pw_gid


def _unshare_network() -> bool:
    """Move the calling process into a new network namespace (Linux): as root directly,
    otherwise inside a new user namespace. False where the platform refuses."""
    if not sys.platform.startswith("linux"):
        return False
    libc = _libc()
    flags = CLONE_NEWNET if os.getuid() == 0 else CLONE_NEWUSER | CLONE_NEWNET
    return libc.unshare(flags) == 0


@functools.cache
def network_isolation() -> bool:
    """Whether :func:`_unshare_network` works here (tried once, in a child)."""
    return _probe(_unshare_network)


@functools.cache
def mount_isolation() -> bool:
    """Whether a private mount namespace can be made here (tried once, in a child)."""
    return _probe(lambda: _libc().unshare(CLONE_NEWNS) == 0 and _libc().mount(
        b"none", b"/", None, MS_REC | MS_PRIVATE, None) == 0)


def _probe(step) -> bool:
    if not sys.platform.startswith("linux"):
        return False
    _libc()

    def child() -> None:
        if not step():
            os._exit(1)
    try:
        return subprocess.run(["true"], preexec_fn=child, check=False).returncode == 0
    except (OSError, subprocess.SubprocessError):
        return False


@functools.cache
def _libc():
    """The C library (looked up once, in the grader: ``find_library`` starts processes, which
    the child between ``fork`` and ``exec`` must not)."""
    return ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)


def mount_plan(paths: list[str]) -> list[tuple[str, str]]:
    """``(folder, entry)`` for each folder on the way to ``paths`` that other users cannot
    enter (``/root`` holding the instructor's Python, say), outermost first: the student's
    process sees such a folder as an empty one holding only ``entry`` (:func:`_expose`)."""
    plan: list[tuple[str, str]] = []
    for p in paths:
        parts = Path(p).resolve().parts
        for k in range(1, len(parts)):
            folder = str(Path(*parts[:k]))
            try:
                blocked = not os.stat(folder).st_mode & 0o001
            except OSError:
                break
            if blocked and (folder, parts[k]) not in plan:
                plan.append((folder, parts[k]))
    return sorted(plan, key=lambda fe: (len(Path(fe[0]).parts), fe))


def _expose(plan: list[tuple[str, str]], stage: Path) -> bool:
    """In a new mount namespace, private to the child (nothing propagates back): each entry
    of ``plan`` is bound to ``stage/<k>`` while it can still be reached, then its folder is
    covered with an empty tmpfs in which the entry alone is bound back."""
    libc = _libc()
    if libc.unshare(CLONE_NEWNS) != 0 or libc.mount(b"none", b"/", None, MS_REC | MS_PRIVATE,
                                                   None) != 0:
        return False
    staged = []
    for k, (folder, entry) in enumerate(plan):
        src, dst = os.path.join(folder, entry).encode(), str(stage / str(k)).encode()
        if libc.mount(src, dst, None, MS_BIND | MS_REC, None) != 0:
            return False
        staged.append(dst)
    covered: set[str] = set()
    for (folder, entry), dst in zip(plan, staged):
        if folder not in covered:
            if libc.mount(b"tmpfs", folder.encode(), b"tmpfs", MS_NOSUID | MS_NODEV,
                          b"mode=0755,size=1m") != 0:
                return False
            covered.add(folder)
        target = os.path.join(folder, entry)
        os.mkdir(target) if os.path.isdir(dst) else open(target, "w").close()
        if libc.mount(dst, target.encode(), None, MS_BIND | MS_REC, None) != 0:
            return False
    return True


def _preexec(limits: Limits, net: bool, plan: list[tuple[str, str]], stage: Path):
    """What the child does between ``fork`` and ``exec``: no network, the folders the sandbox
    user needs, the limits, then the sandbox user."""
    ids = sandbox_ids()

    def setup() -> None:
        if net and not _unshare_network():
            os._exit(70)
        if plan and not _expose(plan, stage):
            os._exit(71)
        mb = 2 ** 20
        for res, value in ((resource.RLIMIT_CPU, (limits.cpu_s, limits.cpu_s + 5)),
                           (resource.RLIMIT_AS, (limits.memory_mb * mb,) * 2),
                           (resource.RLIMIT_FSIZE, (limits.file_mb * mb,) * 2),
                           (resource.RLIMIT_NOFILE, (limits.open_files,) * 2),
                           (resource.RLIMIT_CORE, (0, 0)),
                           (resource.RLIMIT_NPROC, (limits.processes,) * 2)):
            try:
                resource.setrlimit(res, value)
            except (ValueError, OSError):  # macOS refuses RLIMIT_AS; the CPU limit must hold
                if res == resource.RLIMIT_CPU:
                    os._exit(72)
        if ids is not None:
            os.setgroups([])
            os.setgid(ids[1])
            os.setuid(ids[0])
    return setup


_SUBREAPER = []  # [True] once this process is a child subreaper


def become_subreaper() -> bool:
    """Linux: orphans of our descendants are re-parented to this process and killed by
    :meth:`Student.close`, instead of living on under init. Only for a process that grades
    and does nothing else (:func:`tools.classroom.grading.run_class`'s): ``close`` then kills
    every child of this process that runs as the sandbox user."""
    if not _SUBREAPER and sys.platform.startswith("linux") and \
            _libc().prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0:
        _SUBREAPER.append(True)
    return bool(_SUBREAPER)


def _orphans(uid: int) -> list[int]:
    """Our children (re-parented orphans included) that run as ``uid``."""
    found = []
    for entry in Path("/proc").iterdir() if Path("/proc/self").exists() else []:
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            ppid = int(stat.rsplit(")", 1)[1].split()[1])
            if ppid == os.getpid() and entry.stat().st_uid == uid:
                found.append(int(entry.name))
        except (OSError, ValueError, IndexError):
            continue
    return found


def needed_paths(sandbox_root: Path) -> list[str]:
    """What the student's process must reach: Python, its packages, the book, its folder."""
    paths = [sys.base_prefix, sys.prefix, os.path.realpath(sys.executable), str(ROOT),
             str(sandbox_root)]
    paths += [p for p in sys.path if p and os.path.isdir(p)]
    return list(dict.fromkeys(paths))


def _env(home: Path, extra: dict[str, str]) -> dict[str, str]:
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home),
           "TMPDIR": str(home / "tmp"), "LANG": "C.UTF-8", "MPLBACKEND": "Agg",
           "MPLCONFIGDIR": str(home / ".matplotlib"), "PYTHONDONTWRITEBYTECODE": "1",
           "PYTHONPATH": str(ROOT), "D2LMINI_OFFLINE": "1", "D2LMINI_CACHE_DIR": str(home / "c"),
           "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    env.update(extra)
    return env


def _describe_exit(code: int, limits: Limits) -> str:
    if code == -signal.SIGXCPU:
        return f"CPU time limit ({limits.cpu_s} s) reached: the notebook's process was stopped"
    if code == -signal.SIGKILL:
        return (f"the notebook's process was killed (the CPU time limit, {limits.cpu_s} s, "
                f"or the memory limit, {limits.memory_mb} MB)")
    if code == -signal.SIGXFSZ:
        return f"file size limit ({limits.file_mb} MB) reached"
    if code in (70, 71, 72):
        what = {70: "network namespace", 71: "mount namespace for the folders the sandbox user "
                "needs", 72: "CPU time limit"}[code]
        return f"the sandbox could not be set up ({what})"
    if code < 0:
        return f"the notebook's process was killed by signal {signal.Signals(-code).name}"
    return f"the notebook's process ended (exit status {code}) before it was graded"


class Student:
    """One submission's process: ``request`` sends a request and returns the reply, within
    the submission's wall-clock limit; ``close`` kills it and everything it started and
    removes its folder. ``files`` are written into its working folder first (the notebook,
    under its own name, which otter's ``otter.Notebook(...)`` cell reads). Meant for the
    grader's own process (:func:`tools.classroom.grading.run_class`): see :func:`_orphans`."""

    def __init__(self, limits: Limits, env: dict[str, str] | None = None,
                 files: dict[str, bytes] | None = None) -> None:
        if resource is None:
            raise SubmissionError("grading untrusted notebooks needs Linux or macOS")
        self.limits = limits
        self.net = network_isolation()
        if sys.platform.startswith("linux"):
            _libc()  # looked up here, not in the child
        self.deadline = time.monotonic() + limits.wall_s
        self.root: Path | None = Path(tempfile.mkdtemp(prefix="grade-"))
        work, home = self.root / "work", self.root / "home"
        for d in (work, home, home / "tmp"):
            d.mkdir(mode=0o700)
        ids = sandbox_ids()
        plan = mount_plan(needed_paths(self.root)) if ids is not None else []
        stage = self.root / "stage"
        stage.mkdir(mode=0o700)
        for k, (folder, entry) in enumerate(plan):
            is_dir = os.path.isdir(os.path.join(folder, entry))
            (stage / str(k)).mkdir() if is_dir else (stage / str(k)).touch()
        for name, data in (files or {}).items():  # the submission itself, say
            (work / Path(name).name).write_bytes(data)
        if ids is not None:
            self.root.chmod(0o711)
            for d in (work, home, home / "tmp", *work.iterdir()):
                os.chown(d, *ids)
        self.proc = subprocess.Popen(
            [sys.executable, "-B", str(STUDENT_SIDE)], cwd=work, env=_env(home, env or {}),
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
            preexec_fn=_preexec(limits, self.net, plan, stage), start_new_session=True)
        os.set_blocking(self.proc.stdin.fileno(), False)  # a notebook that stops reading
        self._buffer = b""
        self.ended: str | None = None  # why the process was stopped early

    def remaining(self) -> float:
        return self.deadline - time.monotonic()

    def request(self, message: dict) -> dict:
        """The reply to ``message``; :class:`LimitReached` when the time is up or the process
        has gone (it is then killed)."""
        if self.ended is not None:
            raise LimitReached(self.ended)
        data = (json.dumps(message) + "\n").encode("utf-8")
        try:
            self._write(data)
            line = self._read_line()
        except LimitReached as e:
            self.ended = str(e)
            self.close()
            raise
        try:
            reply = json.loads(line)
        except (ValueError, RecursionError):
            reply = None
        if not isinstance(reply, dict):
            raise SubmissionError("the notebook's process sent something that is not a reply")
        return reply

    def _wait(self, fd: int, write: bool) -> None:
        left = self.remaining()
        if left <= 0:
            raise LimitReached(f"time limit ({self.limits.wall_s:g} s wall clock) reached")
        ready = select.select([], [fd], [], left) if write else select.select([fd], [], [], left)
        if not any(ready):
            raise LimitReached(f"time limit ({self.limits.wall_s:g} s wall clock) reached")

    def _write(self, data: bytes) -> None:
        fd = self.proc.stdin.fileno()
        while data:
            self._wait(fd, write=True)
            try:
                data = data[os.write(fd, data[:65536]):]
            except BlockingIOError:
                continue
            except OSError:
                raise LimitReached(self._gone()) from None

    def _read_line(self) -> bytes:
        fd, cap = self.proc.stdout.fileno(), self.limits.reply_mb * 2 ** 20
        chunk = self._buffer
        while b"\n" not in chunk:
            self._wait(fd, write=False)
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                raise LimitReached(self._gone())
            self._buffer += chunk
            if len(self._buffer) > cap:
                raise LimitReached(f"a value is larger than the {self.limits.reply_mb} MB a "
                                   "reply may have")
        line, self._buffer = self._buffer.split(b"\n", 1)
        return line

    def _gone(self) -> str:
        try:
            code = self.proc.wait(timeout=max(0.1, min(5.0, self.remaining())))
        except subprocess.TimeoutExpired:
            return "the notebook's process stopped answering"
        return _describe_exit(code, self.limits)

    def close(self) -> None:
        """Kill the process, its process group and any orphan it left (as the sandbox user),
        then remove the folder."""
        if self.root is None:
            return
        if self.proc.poll() is None:
            with _quiet():
                os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait()
        with _quiet():
            os.killpg(self.proc.pid, signal.SIGKILL)  # children left in its group
        ids = sandbox_ids()
        for _ in range(100 if _SUBREAPER else 0):  # re-parented orphans, and theirs
            orphans = _orphans(ids[0] if ids else os.getuid())
            if not orphans:
                break
            for pid in orphans:
                with _quiet():
                    os.kill(pid, signal.SIGKILL)
                with _quiet():
                    os.waitpid(pid, 0)
        for stream in (self.proc.stdin, self.proc.stdout):
            with _quiet():
                stream.close()
        shutil.rmtree(self.root, ignore_errors=True)
        self.root = None

    def __enter__(self) -> Student:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class _quiet:
    """``with _quiet():`` ignores ``OSError`` (a process already gone)."""

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind, value, tb) -> bool:
        return kind is not None and issubclass(kind, OSError)


# ---------------------------------------------------------------------------- values
class Opaque:
    """A value of the notebook that cannot cross as data (a module, an object of the
    notebook's own class, ...): equal to nothing but itself, and its repr says so."""

    def __init__(self, type_name: str) -> None:
        self.type_name = type_name[:80]

    def __repr__(self) -> str:
        return f"<a {self.type_name} from the notebook, which the tests cannot use>"


class RemoteCallable:
    """A function (or callable object) of the notebook, called in the student's process with
    arguments and result passed as data."""

    def __init__(self, student: Student, ref: int, name: str) -> None:
        self.student, self.ref, self.name = student, ref, name[:80]

    def __repr__(self) -> str:
        return f"<{self.name} from the notebook>"

    def __call__(self, *args, **kwargs):
        message = {"op": "call", "ref": self.ref, "args": [encode(a) for a in args],
                   "kwargs": {str(k): encode(v) for k, v in kwargs.items()}}
        reply = self.student.request(message)
        if "value" in reply:
            return decode(reply["value"], self.student)
        raise NotebookError(str(reply.get("error", "no value"))[:300])


class NotebookError(Exception):
    """An exception raised by the notebook's code when a test called it (its message)."""


def encode(v, depth: int = 0):
    """The grader's own values (a test's arguments) in the protocol's format."""
    from tools.classroom import student_side

    if isinstance(v, (RemoteCallable, Opaque)):
        raise TypeError("a value of the notebook cannot be passed back to it")
    out = student_side.Encoder().encode(v, depth)
    if isinstance(out, dict) and out.get("t") in ("callable", "opaque"):
        raise TypeError(f"a {type(v).__name__} cannot be passed to the notebook")
    return out


def _floating(text) -> float:
    if not isinstance(text, str) or len(text) > 40:
        raise ValueError("not a number")
    return float(text)


def _array(v: dict):
    import numpy as np

    dtype = np.dtype(str(v["dtype"]))
    shape = v["shape"]
    if dtype.kind not in ARRAY_KINDS or dtype.hasobject or not isinstance(shape, list) \
            or len(shape) > 32 or not all(type(n) is int and n >= 0 for n in shape):
        raise ValueError("not an array of numbers")
    raw = base64.b64decode(v["data"], validate=True)
    if len(raw) != math.prod(shape) * dtype.itemsize:
        raise ValueError("an array whose size does not match its shape")
    a = np.frombuffer(raw, dtype=dtype).reshape(shape).copy()
    if v["t"] == "tensor":
        import torch

        return torch.from_numpy(a)
    return a[()] if v["t"] == "npscalar" else a


CONTAINERS = {"list": list, "tuple": tuple, "set": set, "frozenset": frozenset}


def decode(v, student: Student, depth: int = 0):
    """A value from the notebook's process, decoded as untrusted data."""
    if depth > MAX_DEPTH:
        raise ValueError("nested too deeply")
    if v is None or type(v) in (bool, str, int, float):
        return v
    if type(v) is not dict:
        raise ValueError("not a value")
    t = v.get("t")
    if t == "float":
        return _floating(v["v"])
    if t == "ellipsis":
        return ...
    if t == "bigint":
        return int(str(v["v"])[:5000])
    if t == "complex":
        return complex(_floating(v["v"][0]), _floating(v["v"][1]))
    if t in CONTAINERS:
        return CONTAINERS[t](decode(x, student, depth + 1) for x in v["v"])
    if t == "dict":
        return {decode(k, student, depth + 1): decode(x, student, depth + 1) for k, x in v["v"]}
    if t in ("ndarray", "tensor", "npscalar"):
        return _array(v)
    if t == "callable" and type(v.get("ref")) is int:
        return RemoteCallable(student, v["ref"], str(v.get("name", "function")))
    if t == "opaque":
        return Opaque(str(v.get("type", "object")))
    raise ValueError(f"not a value: {str(t)[:40]}")


def isolation() -> dict:
    """What :class:`Student` applies on this machine, for the report."""
    ids = sandbox_ids()
    return {"user": SANDBOX_USER if ids else "the grader's own",
            "network": "none (own network namespace)" if network_isolation() else
            "not isolated (no network namespace on this platform)",
            "subreaper": sys.platform.startswith("linux")}
