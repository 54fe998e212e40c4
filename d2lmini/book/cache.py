"""Trained weights cached on disk, keyed by a fingerprint of the data and the configuration.

The book builds each chapter twice (中文 and English) with identical code: a model trained in
one edition is loaded, not trained again, in the other (the two are built side by side; a lock
makes the second wait for the first's training). A key is a hash of everything
that determines the weights (the training pairs, the hyperparameters, the seed, the torch
version, and the d2lmini code that trains: every file of the package), so changing any of them
trains afresh.
"""

from __future__ import annotations

import ast
import hashlib
import json
import os
import threading
from contextlib import contextmanager
from dataclasses import asdict, is_dataclass
from pathlib import Path
from typing import Any, Callable

import torch
from torch import nn

from ..datahub import get_cache_dir

__all__ = ["fingerprint", "library_fingerprint", "train_cache_dir", "load_or_train",
           "load_or_compute"]

_PACKAGE = Path(__file__).resolve().parents[1]  # d2lmini/


def library_fingerprint(package: str | os.PathLike | None = None, *,
                        code_only: bool = True) -> str:
    """A 16-hex-digit SHA-256 of every file of the d2lmini package (or of the folder
    ``package``): its code and corpora, so that a change to any function that trains, loads or
    batches the data gives another key (hashing the package takes a few milliseconds).

    A Python file counts by its code: its syntax tree without docstrings (comments are not part
    of it), so that editing a docstring or a comment keeps the trained weights and the executed
    chapters; a file that does not parse counts by its bytes, as the corpora do. With
    ``code_only=False`` every byte counts (the book's API page, which shows the docstrings,
    is read again when that fingerprint changes)."""
    folder = _PACKAGE if package is None else Path(package).resolve()
    if not folder.is_dir():
        raise ValueError(f"package must be a folder; got {str(folder)!r}")
    h = hashlib.sha256()
    files = sorted(p for p in folder.rglob("*")
                   if p.is_file() and "__pycache__" not in p.parts and p.suffix != ".pyc")
    for path in files:
        data = path.read_bytes()
        if code_only and path.suffix == ".py":
            data = _code_of(data)
        h.update(path.relative_to(folder).as_posix().encode() + b"\0")
        h.update(data + b"\0")
    return h.hexdigest()[:16]


#: ``ast.parse`` is not safe in two threads at once in CPython 3.11 ("SystemError: AST
#: constructor recursion depth mismatch"); the book's build asks for keys from two threads.
_PARSE_LOCK = threading.Lock()


def _code_of(source: bytes) -> bytes:
    """The syntax tree of a Python file without its docstrings, as bytes; the source itself
    when it does not parse."""
    try:
        with _PARSE_LOCK:
            tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return source
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if (isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
                and body and isinstance(body[0], ast.Expr)
                and isinstance(body[0].value, ast.Constant)
                and isinstance(body[0].value.value, str)):
            node.body = body[1:] or [ast.Pass()]
    return ast.dump(tree).encode()


def fingerprint(*parts: Any) -> str:
    """A 16-hex-digit SHA-256 of ``parts`` (JSON-serialisable: str, numbers, bools, None, and
    lists, tuples or dicts of them, e.g. token lists and a hyperparameter dict), the torch
    version and :func:`library_fingerprint`. Equal parts give equal keys; a change anywhere,
    or in the library's code, gives another key."""
    try:
        text = json.dumps([torch.__version__, library_fingerprint(), *parts], sort_keys=True,
                          ensure_ascii=False)
    except TypeError as e:
        raise TypeError(f"parts must be JSON-serialisable (str, numbers, lists, dicts); {e}") \
            from None
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def train_cache_dir(cache_dir: str | os.PathLike | None = None) -> Path:
    """Where trained weights are kept: ``cache_dir`` if given, else ``$D2LMINI_TRAIN_CACHE``
    (the book's build sets it under ``_build/``), else ``trained/`` in the download cache
    (:func:`d2lmini.get_cache_dir`). Not created here."""
    if cache_dir is not None:
        return Path(cache_dir).expanduser()
    env = os.environ.get("D2LMINI_TRAIN_CACHE")
    return Path(env).expanduser() if env else get_cache_dir() / "trained"


def load_or_train(net: nn.Module, key: str, train: Callable[[], Any], *,
                  cache_dir: str | os.PathLike | None = None) -> tuple[Any, bool]:
    """Load ``net``'s weights saved under ``key``, or call ``train()`` and save them.

    Args:
        net: the model; ``train`` must train this very module (in place).
        key: e.g. :func:`fingerprint` of the data and configuration (letters, digits, ``-_``).
        train: trains ``net`` and returns what should be remembered with the weights (e.g. a
            :class:`d2lmini.TrainResult`; a dataclass is stored as a dict and given back as
            one, anything else must be picklable by ``torch.save``).
        cache_dir: see :func:`train_cache_dir`.

    Returns:
        ``(result, cached)``: ``train()``'s return value (as a dict when it is a dataclass,
        whether trained now or loaded) and whether the weights came from the cache. The
        weights are loaded onto the device
        ``net``'s parameters are on.
    """
    if not isinstance(net, nn.Module):
        raise TypeError(f"net must be a torch.nn.Module; got {type(net).__name__}")
    _check_key(key)
    if not callable(train):
        raise TypeError(f"train must be callable; got {type(train).__name__}")
    path = train_cache_dir(cache_dir) / f"{key}.pt"
    path.parent.mkdir(parents=True, exist_ok=True)
    with _only_one_trainer(path):  # a process training the same key finishes first
        if path.exists():
            device = next(net.parameters()).device
            saved = torch.load(path, map_location=device, weights_only=False)
            net.load_state_dict(saved["state_dict"])
            return saved["result"], True
        result = train()
        stored = asdict(result) if is_dataclass(result) and not isinstance(result, type) \
            else result
        tmp = path.with_suffix(".tmp")
        torch.save({"state_dict": net.state_dict(), "result": stored}, tmp)
        os.replace(tmp, path)  # atomic: a concurrent reader sees the whole file or none
        return stored, False


def load_or_compute(key: str, compute: Callable[[], Any], *,
                    cache_dir: str | os.PathLike | None = None) -> tuple[Any, bool]:
    """The JSON result saved under ``key``, or ``compute()``'s result, saved (experiments whose
    outcome is numbers, not weights: many small trainings, say).

    Args:
        key: as for :func:`load_or_train`.
        compute: returns a JSON-serialisable value (``inf`` and ``nan`` are kept as JSON's
            extensions ``Infinity`` and ``NaN``).
        cache_dir: see :func:`train_cache_dir`.

    Returns:
        ``(result, cached)``. Two processes asking for the same key at once compute it once.
    """
    _check_key(key)
    if not callable(compute):
        raise TypeError(f"compute must be callable; got {type(compute).__name__}")
    path = train_cache_dir(cache_dir) / f"{key}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    with _only_one_trainer(path):
        if path.exists():
            return json.loads(path.read_text(encoding="utf-8")), True
        result = compute()
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(result), encoding="utf-8")
        os.replace(tmp, path)
        return json.loads(path.read_text(encoding="utf-8")), False


def _check_key(key: Any) -> None:
    if not isinstance(key, str) or not key or not key.replace("-", "").replace("_", "") \
            .isalnum():
        raise ValueError(f"key must be a non-empty str of letters, digits, '-' and '_'; "
                         f"got {key!r}")


@contextmanager
def _only_one_trainer(path: Path):
    """Hold an exclusive lock on ``<path>.lock`` (POSIX ``flock``; the system releases it when
    the process ends, however it ends): two processes that ask for the same weights at once
    (the book's two editions, built side by side) train them once; the second waits and
    loads. Where ``fcntl`` is missing (Windows) nothing is locked and both may train."""
    try:
        import fcntl
    except ImportError:
        yield
        return
    with open(path.with_suffix(".lock"), "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)
