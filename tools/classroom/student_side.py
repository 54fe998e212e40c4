"""The student's side of isolated grading (:mod:`tools.classroom.sandbox`): runs, as its own
unprivileged process, the code cells of one submission and then answers the grader's requests.

Nothing here is trusted by the grader: the student's code runs in this process and may change
anything in it, this file included. The grader therefore treats every answer as untrusted data
(:func:`tools.classroom.sandbox.decode`) and runs the tests itself, in its own process, with its
own NumPy, PyTorch and builtins. This side only has to serve an honest notebook well:

* the protocol uses copies of the standard input and output taken before any student code runs;
  the student's ``print`` goes to a file of bounded size (``RLIMIT_FSIZE``), its ``input()`` reads
  nothing;
* requests, one JSON object a line: ``{"op": "run", "cells": [...]}`` executes the cells in order
  (an error in one cell is recorded and the next cell runs, as otter does); ``{"op": "get",
  "name": n}`` returns the encoded value of a global name; ``{"op": "call", "ref": k, "args":
  [...], "kwargs": {...}}`` calls a function or callable object named by an earlier answer with
  decoded arguments;
* a value crosses as data: numbers, strings, lists, tuples, dicts, sets, NumPy arrays and PyTorch
  tensors (as bytes); a callable crosses as a reference the grader calls through this process;
* before the first cell it notes the objects the tests use (builtins, ``math``, NumPy, PyTorch,
  otter, and their ``sys.modules`` entries) and reports which of them the notebook replaced.

Standard library only at import time (NumPy and PyTorch when the notebook uses them).
"""
from __future__ import annotations

import base64
import builtins
import itertools
import json
import os
import sys
import traceback

MODULES = ("builtins", "math", "numpy", "numpy.testing", "torch", "torch.nn",
           "torch.nn.functional", "otter", "d2lmini")
MAX_DEPTH = 20


def _open_channel():
    """The protocol's input and output, moved off fds 0 and 1, which now point at /dev/null
    and a log file in the home folder."""
    fd_in, fd_out = os.dup(0), os.dup(1)
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    log = os.open(os.path.join(os.environ.get("HOME", "."), "output.log"),
                  os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.dup2(log, 1)
    os.dup2(log, 2)
    sys.stdin = open(0, closefd=False)
    sys.stdout = open(1, "w", closefd=False, buffering=1)
    sys.stderr = sys.stdout
    return os.fdopen(fd_in, "r", encoding="utf-8"), os.fdopen(fd_out, "w", encoding="utf-8")


def _resolve(dotted: str):
    """The object at ``module.attr.attr`` (the longest importable module prefix)."""
    import importlib

    parts = dotted.split(".")
    for k in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:k]))
        except Exception:
            continue
        for attr in parts[k:]:
            obj = getattr(obj, attr)
        return obj
    raise ImportError(dotted)


def snapshot(watch: list[str], source: str) -> dict[str, object]:
    """``{what: object}`` for every name in ``watch`` (``numpy.allclose``, ``builtins.len``)
    whose module ``source`` (the notebook's code) imports, every builtin, and the
    ``sys.modules`` entries of :data:`MODULES`."""
    out: dict[str, object] = {f"builtins.{k}": v for k, v in vars(builtins).items()
                              if not k.startswith("_")}
    for dotted in watch:
        if dotted.split(".")[0] in source or dotted.startswith(("builtins.", "math.")):
            try:
                out[dotted] = _resolve(dotted)
            except Exception:
                continue
    for name in MODULES:
        out[f"sys.modules[{name!r}]"] = sys.modules.get(name)
    return out


def changed(before: dict[str, object]) -> list[str]:
    """What differs from :func:`snapshot` (``numpy.allclose``, ``sys.modules['otter']``,
    ...); the builtins are then put back, for this side's own code."""
    out = []
    saved = {k[len("builtins."):]: v for k, v in before.items() if k.startswith("builtins.")}
    current = dict(vars(builtins))
    vars(builtins).update(saved)
    out += [f"builtins.{k}" for k, v in saved.items() if current.get(k) is not v]
    for what, obj in before.items():
        if what.startswith("sys.modules["):
            name = what[len("sys.modules['"):-2]
            now = sys.modules.get(name)
            if (name in sys.modules and type(now) is not type(sys)) or \
                    (obj is not None and now is not obj):
                out.append(what)  # a module imported since is no change; one replaced is
        elif not what.startswith("builtins."):
            try:
                if _resolve(what) is not obj:
                    out.append(what)
            except Exception:
                out.append(what)
    return out


def _magic_free(src: str) -> str:
    """IPython magics (``%pip``, ``!ls``) become ``pass`` at their indentation."""
    lines = []
    for ln in src.split("\n"):
        body = ln.lstrip()
        lines.append(ln[:len(ln) - len(body)] + "pass" if body.startswith(("%", "!")) else ln)
    return "\n".join(lines)


def _error(exc: BaseException) -> str:
    line = ""
    for frame in reversed(traceback.extract_tb(exc.__traceback__)):
        if frame.filename.startswith("<cell"):
            line = f" ({frame.filename[1:-1]}, line {frame.lineno})"
            break
    text = f"{type(exc).__name__}: {exc}".splitlines()[0][:300]
    return text + line


def run_cells(cells: list[str], ns: dict) -> list[dict]:
    """Execute every cell in ``ns``; the errors, one per failing cell."""
    errors = []
    for k, src in enumerate(cells):
        try:
            exec(compile(_magic_free(src), f"<cell {k + 1}>", "exec"), ns)
        except BaseException as e:  # SystemExit and KeyboardInterrupt included: next cell
            errors.append({"cell": k + 1, "error": _error(e)})
        try:
            sys.stdout.flush()
        except OSError:
            pass
    return errors


class Encoder:
    """Values as JSON-able data; callables as references kept in :attr:`refs`."""

    def __init__(self) -> None:
        self.refs: list = []

    def encode(self, v, depth: int = 0):
        if depth > MAX_DEPTH:
            raise ValueError("nested too deeply")
        if v is None or type(v) in (bool, str):
            return v
        if v is Ellipsis:
            return {"t": "ellipsis"}
        if type(v) is int:
            return v if abs(v) < 2 ** 63 else {"t": "bigint", "v": str(v)}
        if type(v) is float:
            return {"t": "float", "v": repr(v)}
        if type(v) is complex:
            return {"t": "complex", "v": [repr(v.real), repr(v.imag)]}
        if type(v) in (list, tuple, set, frozenset):
            return {"t": type(v).__name__, "v": [self.encode(x, depth + 1) for x in v]}
        if type(v) is dict:
            return {"t": "dict", "v": [[self.encode(k, depth + 1), self.encode(x, depth + 1)]
                                       for k, x in v.items()]}
        return self._array(v) or self._other(v, depth)

    def _array(self, v):
        np = sys.modules.get("numpy")
        torch = sys.modules.get("torch")
        if torch is not None and isinstance(v, torch.Tensor):
            a = v.detach().cpu()
            return {"t": "tensor", **_array_data(a.numpy() if a.dtype != torch.bfloat16
                                                 else a.float().numpy())}
        if np is not None and isinstance(v, np.ndarray) and v.dtype != object:
            return {"t": "ndarray", **_array_data(v)}
        if np is not None and isinstance(v, np.generic) and not isinstance(v, np.object_):
            return {"t": "npscalar", **_array_data(np.asarray(v))}
        if torch is not None and isinstance(v, torch.Size):
            return {"t": "tuple", "v": [int(x) for x in v]}
        return None

    def _other(self, v, depth: int):
        if isinstance(v, (bool, int, float, str, list, tuple, dict)):  # a subclass
            base = next(t for t in (bool, int, float, str, list, tuple, dict) if isinstance(v, t))
            return self.encode(base(v), depth)
        if callable(v):
            self.refs.append(v)
            return {"t": "callable", "ref": len(self.refs) - 1,
                    "name": getattr(type(v), "__name__", "?")}
        return {"t": "opaque", "type": type(v).__name__}


def _array_data(a) -> dict:
    import numpy as np

    a = np.ascontiguousarray(a)
    return {"dtype": a.dtype.str, "shape": list(a.shape),
            "data": base64.b64encode(a.tobytes()).decode("ascii")}


def decode_args(v):
    """The grader's arguments (values only; the grader is trusted)."""
    if isinstance(v, list):
        return [decode_args(x) for x in v]
    if not isinstance(v, dict):
        return v
    t = v.get("t")
    if t == "float":
        return float(v["v"])
    if t == "ellipsis":
        return ...
    if t == "bigint":
        return int(v["v"])
    if t == "complex":
        return complex(float(v["v"][0]), float(v["v"][1]))
    if t in ("list", "tuple", "set", "frozenset"):
        return {"list": list, "tuple": tuple, "set": set, "frozenset": frozenset}[t](
            decode_args(x) for x in v["v"])
    if t == "dict":
        return {decode_args(k): decode_args(x) for k, x in v["v"]}
    if t in ("ndarray", "tensor", "npscalar"):
        import numpy as np

        a = np.frombuffer(base64.b64decode(v["data"]), dtype=np.dtype(v["dtype"]))
        a = a.reshape(v["shape"]).copy()
        if t == "tensor":
            import torch

            return torch.from_numpy(a)
        return a[()] if t == "npscalar" else a
    raise ValueError(f"cannot pass a {t} to the notebook")


def answer(req: dict, ns: dict, enc: Encoder, before: dict) -> dict:
    """The reply to one request."""
    op = req.get("op")
    if op == "run":
        errors = run_cells(req["cells"], ns)
        return {"errors": errors, "changed": changed(before)}
    if op == "get":
        if req["name"] not in ns:
            return {"missing": True}
        return {"value": enc.encode(ns[req["name"]])}
    if op == "call":
        args = decode_args(req.get("args", []))
        kwargs = {k: decode_args(x) for k, x in req.get("kwargs", {}).items()}
        return {"value": enc.encode(enc.refs[req["ref"]](*args, **kwargs))}
    return {"error": f"unknown request {op!r}"}


def _reply(replies, line: str, ns: dict, enc: Encoder, before: dict) -> None:
    try:
        reply = answer(json.loads(line), ns, enc, before)
    except BaseException as e:
        reply = {"error": _error(e)}
    try:
        text = json.dumps(reply)
    except BaseException as e:
        text = json.dumps({"error": _error(e)})
    replies.write(text + "\n")
    replies.flush()


def main() -> int:
    requests, replies = _open_channel()
    first = requests.readline()  # {"op": "run", "cells": [...]}
    request = json.loads(first)
    before = snapshot(request.get("watch", []), "\n".join(request.get("cells", [])))
    ns: dict = {"__name__": "__main__", "__builtins__": builtins}
    enc = Encoder()
    for line in itertools.chain([first], requests):
        _reply(replies, line, ns, enc, before)
    return 0


if __name__ == "__main__":
    sys.exit(main())
