"""Data: checksummed downloads, the Tatoeba translation pairs (English–French, English–Chinese),
vocabularies, padded mini-batches, and the text8 word2vec corpus.

Every loader finds its data set in this order and prints ONE line (``[d2lmini] NAME: ...``)
naming the source it used:

1. ``$D2LMINI_DATA_DIR/<name>/<file>`` (read-only local copy: ``fra-eng/fra.txt``,
   ``cmn-eng/cmn.txt``, ``text8/text8``);
2. the download cache ``$D2LMINI_CACHE_DIR`` (default ``~/.cache/d2lmini``);
3. a download from the canonical host, or from ``$D2LMINI_MIRROR`` when it is set, verified
   against the SHA-1 registered in :data:`DATA_HUB` before it enters the cache (skipped when
   ``D2LMINI_OFFLINE=1``);
4. a small fallback that needs no network: the corpora shipped in ``d2lmini/corpora/`` for the
   translation pairs, and a text8-style corpus built from the Wikipedia sample bundled with
   gensim for text8.

Names and signatures follow d2l ("Dive into Deep Learning") where d2l has them.
"""

from __future__ import annotations

import collections
import hashlib
import itertools
import os
import re
import shutil
import sys
import tempfile
import time
import urllib.request
import zipfile
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import torch
from torch.utils import data as _torch_data

__all__ = [
    "DATA_URL",
    "DATA_HUB",
    "DATASET_FILES",
    "OfflineError",
    "ChecksumError",
    "get_cache_dir",
    "download",
    "download_extract",
    "read_data_nmt",
    "preprocess_nmt",
    "tokenize_nmt",
    "Vocab",
    "truncate_pad",
    "build_array_nmt",
    "load_array",
    "split_nmt",
    "load_data_nmt",
    "read_data_cmn",
    "preprocess_cmn",
    "tokenize_cmn",
    "load_data_cmn",
    "load_text8",
]

#: d2l's data host.
DATA_URL = "http://d2l-data.s3-accelerate.amazonaws.com/"

#: ``name -> (url, sha1)``. ``sha1`` is the hex SHA-1 of the downloaded archive, or ``None``
#: where no trustworthy checksum is published (then the download is accepted unverified and a
#: warning says so; text8 is instead checked by content: exactly 100,000,000 bytes of a-z and
#: spaces once unzipped).
DATA_HUB: dict[str, tuple[str, str | None]] = {
    # the archive d2l uses; its sha1 is the one d2l registers
    "fra-eng": (DATA_URL + "fra-eng.zip", "94646ad1522d915e7b0f9296181140edcf86a4f5"),
    # manythings.org publishes no checksum and replaces the file over time: unverified
    "cmn-eng": ("http://www.manythings.org/anki/cmn-eng.zip", None),
    # Matt Mahoney's original; no published checksum, verified by content after unzipping
    "text8": ("http://mattmahoney.net/dc/text8.zip", None),
}

#: The file each data set provides, relative to ``$D2LMINI_DATA_DIR``.
DATASET_FILES: dict[str, str] = {
    "fra-eng": "fra-eng/fra.txt",
    "cmn-eng": "cmn-eng/cmn.txt",
    "text8": "text8/text8",
}

#: Corpora shipped inside the package, used when nothing else is available.
_FALLBACK_FILES = {"fra-eng": "fra-eng-mini.txt", "cmn-eng": "cmn-eng-mini.txt"}

_TEXT8_NUM_BYTES = 100_000_000
_GENSIM_WIKI = "enwiki-latest-pages-articles1.xml-p000000010p000030302-shortened.bz2"
_ENV_HELP = ("set D2LMINI_DATA_DIR to a directory holding {file}, put the file in the cache "
             "({cache}), or unset D2LMINI_OFFLINE (and optionally set D2LMINI_MIRROR) to allow "
             "the download")


class OfflineError(RuntimeError):
    """Raised when a download is needed but ``D2LMINI_OFFLINE=1`` forbids the network."""


class ChecksumError(OSError):
    """Raised when a downloaded file does not have the registered checksum."""


# ---------------------------------------------------------------------------------------------
# environment and downloads
# ---------------------------------------------------------------------------------------------

def _offline() -> bool:
    return os.environ.get("D2LMINI_OFFLINE", "").strip().lower() in {"1", "true", "yes", "on"}


def _announce(name: str, message: str) -> None:
    print(f"[d2lmini] {name}: {message}", flush=True)


def _check_name(name: str) -> None:
    if not isinstance(name, str) or name not in DATA_HUB:
        raise KeyError(f"unknown data set {name!r}; known data sets: {sorted(DATA_HUB)}")


def get_cache_dir(cache_dir: str | os.PathLike | None = None) -> Path:
    """The download cache: ``cache_dir`` if given, else ``$D2LMINI_CACHE_DIR``, else
    ``~/.cache/d2lmini``. The directory is not created here."""
    if cache_dir is not None:
        return Path(cache_dir).expanduser()
    env = os.environ.get("D2LMINI_CACHE_DIR")
    return Path(env).expanduser() if env else Path.home() / ".cache" / "d2lmini"


def _source_url(name: str) -> str:
    """The URL to fetch ``name`` from: the canonical one, or ``$D2LMINI_MIRROR/<file name>``."""
    url = DATA_HUB[name][0]
    mirror = os.environ.get("D2LMINI_MIRROR", "").strip()
    if mirror:
        return mirror.rstrip("/") + "/" + url.rsplit("/", 1)[-1]
    return url


def _sha1(path: Path) -> str:
    h = hashlib.sha1()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def download(name: str, cache_dir: str | os.PathLike | None = None, *, timeout: float = 30.0,
             retries: int = 3, quiet: bool = False) -> Path:
    """Download the file registered as ``DATA_HUB[name]`` into the cache and return its path.

    A cached file whose SHA-1 matches is returned without touching the network. Otherwise the
    file is fetched from ``$D2LMINI_MIRROR`` (when set; the mirror must host the same file
    name) or the canonical URL, with a ``timeout`` in seconds per attempt and up to ``retries``
    attempts with back-off, streamed into a temporary file in the cache directory, verified,
    and only then renamed into place, so an interrupted or corrupted download never leaves a
    file that looks valid.

    Raises:
        KeyError: ``name`` is not in :data:`DATA_HUB`.
        OfflineError: the file is not cached and ``D2LMINI_OFFLINE=1``.
        ChecksumError: the downloaded bytes do not have the registered SHA-1 (nothing is kept).
        OSError: every attempt failed (the last error is chained).
    """
    _check_name(name)
    if not isinstance(retries, int) or retries < 1:
        raise ValueError(f"retries must be a positive int; got {retries!r}")
    if not timeout or timeout <= 0:
        raise ValueError(f"timeout must be a positive number of seconds; got {timeout!r}")
    url, sha1 = DATA_HUB[name]
    cache = get_cache_dir(cache_dir)
    fname = cache / url.rsplit("/", 1)[-1]
    if fname.is_file():
        if sha1 is None or _sha1(fname) == sha1:
            return fname
        if not quiet:
            print(f"[d2lmini] {name}: cached {fname} has a wrong checksum; fetching it again",
                  file=sys.stderr)
    if _offline():
        raise OfflineError(
            f"{name}: a download is needed but D2LMINI_OFFLINE=1 forbids the network; "
            + _ENV_HELP.format(file=DATASET_FILES.get(name, fname.name), cache=cache))
    source = _source_url(name)
    cache.mkdir(parents=True, exist_ok=True)
    last_error: Exception | None = None
    for attempt in range(retries):
        fd, tmp_name = tempfile.mkstemp(prefix=fname.name + ".", suffix=".part", dir=cache)
        tmp = Path(tmp_name)
        try:
            h = hashlib.sha1()
            request = urllib.request.Request(source, headers={"User-Agent": "d2lmini"})
            with os.fdopen(fd, "wb") as out, urllib.request.urlopen(request,
                                                                    timeout=timeout) as resp:
                expected = resp.headers.get("Content-Length")
                size = 0
                for chunk in iter(lambda: resp.read(1 << 20), b""):
                    out.write(chunk)
                    h.update(chunk)
                    size += len(chunk)
            if expected is not None and int(expected) != size:
                raise OSError(f"incomplete download of {source}: {size} of {expected} bytes")
            if sha1 is not None and h.hexdigest() != sha1:
                raise ChecksumError(
                    f"{name}: {source} has SHA-1 {h.hexdigest()}, expected {sha1}; the file was "
                    "discarded (a wrong mirror, a proxy's error page, or a changed upstream file)")
            if sha1 is None and not quiet:
                print(f"[d2lmini] {name}: no checksum is registered for {url}; the download "
                      "was not verified", file=sys.stderr)
            os.replace(tmp, fname)
            return fname
        except ChecksumError:
            tmp.unlink(missing_ok=True)
            raise
        except (OSError, ValueError) as e:  # URLError, timeouts, HTTP errors, bad lengths
            tmp.unlink(missing_ok=True)
            last_error = e
            if attempt + 1 < retries:
                time.sleep(min(2 ** attempt, 8))
    raise OSError(f"{name}: downloading {source} failed after {retries} attempt(s): "
                  f"{last_error}") from last_error


def download_extract(name: str, folder: str | None = None,
                     cache_dir: str | os.PathLike | None = None) -> Path:
    """Download ``name`` (see :func:`download`), unzip it into ``<cache>/<name>/`` and return
    that directory, or its sub-directory ``folder`` when given (d2l's signature).

    Extraction goes to a temporary directory that is renamed into place when complete, so a
    present ``<cache>/<name>/`` is always a whole archive. Members that would land outside it
    are rejected.
    """
    fname = download(name, cache_dir)
    target = fname.parent / name
    if not target.is_dir():
        if fname.suffix != ".zip":
            raise ValueError(f"{name}: only zip archives can be extracted; got {fname.name}")
        tmp = Path(tempfile.mkdtemp(prefix=name + ".", suffix=".part", dir=fname.parent))
        try:
            with zipfile.ZipFile(fname) as zf:
                for member in zf.namelist():
                    dest = (tmp / member).resolve()
                    if not str(dest).startswith(str(tmp.resolve())):
                        raise ValueError(f"{name}: unsafe path in archive: {member!r}")
                zf.extractall(tmp)
            os.replace(tmp, target)
        finally:
            if tmp.exists():
                shutil.rmtree(tmp, ignore_errors=True)
    return target / folder if folder else target


def _find_in(directory: Path, file_name: str) -> Path | None:
    if not directory.is_dir():
        return None
    direct = directory / file_name
    if direct.is_file():
        return direct
    return next((p for p in sorted(directory.rglob(file_name)) if p.is_file()), None)


def _resolve(name: str) -> tuple[Path | None, str]:
    """Find ``name`` locally, in the cache, or by downloading; return ``(path, source)``.

    ``path`` is ``None`` when none of these worked; ``source`` then says why, for the fallback's
    announcement.
    """
    _check_name(name)
    rel = DATASET_FILES[name]
    data_dir = os.environ.get("D2LMINI_DATA_DIR", "").strip()
    if data_dir:
        local = Path(data_dir).expanduser() / rel
        if local.is_file():
            return local, f"local data dir {local}"
    cache = get_cache_dir()
    cached = _find_in(cache / name, Path(rel).name)
    if cached is not None:
        return cached, f"cache {cached}"
    where = f"not in D2LMINI_DATA_DIR ({data_dir or 'unset'}) or the cache ({cache})"
    if _offline():
        return None, f"{where}; D2LMINI_OFFLINE=1"
    try:
        extracted = download_extract(name)
    except ChecksumError:
        raise
    except OSError as e:
        return None, f"{where}; download failed ({e})"
    found = _find_in(extracted, Path(rel).name)
    if found is None:
        raise FileNotFoundError(f"{name}: the archive has no file named {Path(rel).name}")
    return found, f"downloaded from {_source_url(name)} into cache {found}"


def _fallback_path(name: str) -> Path:
    return Path(__file__).with_name("corpora") / _FALLBACK_FILES[name]


def _read_pairs_file(name: str) -> str:
    path, source = _resolve(name)
    if path is not None:
        _announce(name, source)
        return path.read_text(encoding="utf-8")
    fallback = _fallback_path(name)
    text = fallback.read_text(encoding="utf-8")
    num = sum(1 for line in text.split("\n") if "\t" in line)
    _announce(name, f"offline fallback shipped in the package {fallback} ({num} pairs; {source}); "
                    "numbers will differ from the published book")
    return text


# ---------------------------------------------------------------------------------------------
# English–French
# ---------------------------------------------------------------------------------------------

def _check_positive_int(value: Any, arg: str) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise ValueError(f"{arg} must be a positive int; got {value!r}")


def _check_num_examples(num_examples: Any) -> None:
    if num_examples is not None:
        _check_positive_int(num_examples, "num_examples")


def read_data_nmt() -> str:
    """The raw English–French text (``fra.txt``): one ``English<TAB>French`` pair per line,
    shortest first. Prints one line naming the source (see the module docstring)."""
    return _read_pairs_file("fra-eng")


_PUNCT_AFTER_CHAR = re.compile(r"(?<=[^ ])([,.!?])")


def preprocess_nmt(text: str) -> str:
    """d2l's preprocessing: non-breaking spaces (U+00A0, U+202F) become spaces, everything is
    lower-cased, and a space is inserted before ``, . ! ?`` when it follows a non-space.

    >>> preprocess_nmt("Go.\\tVa\\u202f!")
    'go .\\tva !'
    """
    if not isinstance(text, str):
        raise ValueError(f"text must be a str; got {type(text).__name__}")
    text = text.replace("\u202f", " ").replace("\xa0", " ").lower()
    return _PUNCT_AFTER_CHAR.sub(r" \1", text)


def _pairs(text: str, num_examples: int | None) -> Iterable[tuple[str, str]]:
    count = 0
    for line in text.split("\n"):
        if num_examples is not None and count >= num_examples:
            break
        parts = line.split("\t")
        if len(parts) >= 2:  # extra columns (attribution) are ignored
            count += 1
            yield parts[0], parts[1]


def tokenize_nmt(text: str, num_examples: int | None = None
                 ) -> tuple[list[list[str]], list[list[str]]]:
    """Split preprocessed pairs into word tokens.

    Each line ``source<TAB>target[<TAB>...]`` gives one source and one target token list (split
    at whitespace); lines without a tab are skipped, columns after the second ignored. At most
    ``num_examples`` pairs are returned (exactly that many when the text has enough; d2l's
    version returns one more).

    Returns:
        ``(source, target)``: two lists of equal length N of token lists.
    """
    if not isinstance(text, str):
        raise ValueError(f"text must be a str; got {type(text).__name__}")
    _check_num_examples(num_examples)
    source, target = [], []
    for src, tgt in _pairs(text, num_examples):
        source.append(src.split())
        target.append(tgt.split())
    return source, target


class Vocab:
    """A vocabulary mapping tokens to integer indices (d2l's ``Vocab``).

    Index 0 is ``'<unk>'``, then ``reserved_tokens`` in the given order, then every token seen
    at least ``min_freq`` times, most frequent first and ties broken alphabetically, so that the
    same corpus always gives the same indices. Unknown tokens map to ``unk`` (0).

    Args:
        tokens: a list of tokens or a list of token lists (flattened).
        min_freq: tokens seen fewer times are left out (they map to ``<unk>``).
        reserved_tokens: special tokens such as ``['<pad>', '<bos>', '<eos>']``.

    Attributes:
        idx_to_token (list[str]), token_to_idx (dict[str, int]),
        token_freqs (list of ``(token, count)``, most frequent first, ties alphabetical).
    """

    def __init__(self, tokens: Sequence[str] | Sequence[Sequence[str]] | None = None,
                 min_freq: int = 0, reserved_tokens: Sequence[str] | None = None) -> None:
        if isinstance(min_freq, bool) or not isinstance(min_freq, int) or min_freq < 0:
            raise ValueError(f"min_freq must be a non-negative int; got {min_freq!r}")
        tokens = [] if tokens is None else list(tokens)
        if isinstance(tokens, str):
            raise ValueError("tokens must be a list of tokens or of token lists, not a str")
        if tokens and isinstance(tokens[0], (list, tuple)):
            tokens = [token for line in tokens for token in line]
        reserved = [] if reserved_tokens is None else list(reserved_tokens)
        if isinstance(reserved_tokens, str):
            raise ValueError("reserved_tokens must be a list of str, e.g. ['<pad>']")
        counter = collections.Counter(tokens)
        self.token_freqs: list[tuple[str, int]] = sorted(counter.items(),
                                                         key=lambda kv: (-kv[1], kv[0]))
        self.idx_to_token: list[str] = []
        self.token_to_idx: dict[str, int] = {}
        for token in ["<unk>", *reserved]:
            self._add(token)
        for token, freq in self.token_freqs:
            if freq < min_freq:
                break  # sorted by frequency: the rest are rarer
            self._add(token)

    def _add(self, token: str) -> None:
        if token not in self.token_to_idx:
            self.token_to_idx[token] = len(self.idx_to_token)
            self.idx_to_token.append(token)

    def __len__(self) -> int:
        return len(self.idx_to_token)

    def __contains__(self, token: object) -> bool:
        return token in self.token_to_idx

    def __getitem__(self, tokens: str | Sequence) -> Any:
        """A token's index, or (recursively) a list of indices for a (nested) list/tuple."""
        if isinstance(tokens, (list, tuple)):
            return [self.__getitem__(token) for token in tokens]
        return self.token_to_idx.get(tokens, self.unk)

    def to_tokens(self, indices: int | Sequence | torch.Tensor) -> Any:
        """Inverse of ``__getitem__``: an index gives a token, a (nested) list or tensor of
        indices gives a (nested) list of tokens. Raises ``ValueError`` for an index out of
        range."""
        if isinstance(indices, torch.Tensor):
            indices = indices.tolist()
        if isinstance(indices, (list, tuple)):
            return [self.to_tokens(index) for index in indices]
        index = int(indices)
        if not 0 <= index < len(self.idx_to_token):
            raise ValueError(f"index must be in [0, {len(self.idx_to_token)}); got {index}")
        return self.idx_to_token[index]

    @property
    def unk(self) -> int:
        """The index of ``'<unk>'`` (0)."""
        return 0

    def __repr__(self) -> str:
        head = ", ".join(self.idx_to_token[:8])
        return f"Vocab(size={len(self)}, first=[{head}{', ...' if len(self) > 8 else ''}])"


def truncate_pad(line: Sequence[Any], num_steps: int, padding_token: Any) -> list[Any]:
    """Cut ``line`` to ``num_steps`` items or pad it with ``padding_token`` to that length."""
    _check_positive_int(num_steps, "num_steps")
    line = list(line)
    if len(line) > num_steps:
        return line[:num_steps]
    return line + [padding_token] * (num_steps - len(line))


def build_array_nmt(lines: Sequence[Sequence[str]], vocab: Vocab, num_steps: int
                    ) -> tuple[torch.Tensor, torch.Tensor]:
    """Turn N token lists into a padded index matrix.

    Each line is mapped to indices, ``<eos>`` is appended, and the result is truncated or padded
    with ``<pad>`` to ``num_steps``. ``vocab`` must contain ``<pad>`` and ``<eos>``.

    Returns:
        ``array``: (N, num_steps) int64; ``valid_len``: (N,) int64, the number of tokens that
        are not padding (``<eos>`` included unless it was cut off).
    """
    _check_positive_int(num_steps, "num_steps")
    for special in ("<pad>", "<eos>"):
        if special not in vocab:
            raise ValueError(f"vocab must contain {special!r} (pass it in reserved_tokens)")
    pad, eos = vocab["<pad>"], vocab["<eos>"]
    rows = [vocab[list(line)] + [eos] for line in lines]
    array = torch.tensor([truncate_pad(row, num_steps, pad) for row in rows],
                         dtype=torch.int64).reshape(len(rows), num_steps)
    valid_len = torch.tensor([min(len(row), num_steps) for row in rows], dtype=torch.int64)
    return array, valid_len


def load_array(data_arrays: Sequence[torch.Tensor], batch_size: int, is_train: bool = True,
               *, seed: int | None = None) -> _torch_data.DataLoader:
    """A ``DataLoader`` over a ``TensorDataset`` of ``data_arrays`` (all with the same first
    dimension N); shuffled when ``is_train``.

    With ``seed`` the shuffling uses its own ``torch.Generator`` and is repeatable regardless of
    the global random state; without it, it follows the global state (``d2l.set_seed``).
    """
    _check_positive_int(batch_size, "batch_size")
    arrays = tuple(data_arrays)
    if not arrays:
        raise ValueError("data_arrays must hold at least one tensor")
    n = arrays[0].shape[0]
    if any(a.shape[0] != n for a in arrays):
        raise ValueError("data_arrays must share their first dimension; got "
                         f"{[tuple(a.shape) for a in arrays]}")
    generator = torch.Generator().manual_seed(seed) if seed is not None else None
    dataset = _torch_data.TensorDataset(*arrays)
    return _torch_data.DataLoader(dataset, batch_size, shuffle=is_train, generator=generator)


def split_nmt(source: Sequence[Any], target: Sequence[Any], test_fraction: float = 0.1,
              seed: int = 0) -> tuple[list, list, list, list]:
    """Split parallel lists into training and held-out pairs by a seeded random permutation.

    Returns ``(train_source, train_target, test_source, test_target)``; the test part has
    ``round(test_fraction * N)`` pairs (at least 1 when ``0 < test_fraction`` and N > 1). Build
    the vocabularies from the training part only, so that held-out words stay unseen.
    """
    if len(source) != len(target):
        raise ValueError(f"source and target must have the same length; got {len(source)} and "
                         f"{len(target)}")
    if not isinstance(test_fraction, (int, float)) or not 0 <= test_fraction < 1:
        raise ValueError(f"test_fraction must be in [0, 1); got {test_fraction!r}")
    n = len(source)
    num_test = round(test_fraction * n)
    if test_fraction > 0 and n > 1:
        num_test = max(num_test, 1)
    perm = torch.randperm(n, generator=torch.Generator().manual_seed(seed)).tolist()
    test_idx, train_idx = sorted(perm[:num_test]), sorted(perm[num_test:])
    return ([source[i] for i in train_idx], [target[i] for i in train_idx],
            [source[i] for i in test_idx], [target[i] for i in test_idx])


_RESERVED = ["<pad>", "<bos>", "<eos>"]


def _load_pairs(source: list[list[str]], target: list[list[str]], batch_size: int,
                num_steps: int) -> tuple[_torch_data.DataLoader, Vocab, Vocab]:
    src_vocab = Vocab(source, min_freq=2, reserved_tokens=_RESERVED)
    tgt_vocab = Vocab(target, min_freq=2, reserved_tokens=_RESERVED)
    src_array, src_valid_len = build_array_nmt(source, src_vocab, num_steps)
    tgt_array, tgt_valid_len = build_array_nmt(target, tgt_vocab, num_steps)
    data_iter = load_array((src_array, src_valid_len, tgt_array, tgt_valid_len), batch_size)
    return data_iter, src_vocab, tgt_vocab


def load_data_nmt(batch_size: int, num_steps: int, num_examples: int | None = 600
                  ) -> tuple[_torch_data.DataLoader, Vocab, Vocab]:
    """The first ``num_examples`` English–French pairs as shuffled mini-batches (d2l's
    ``load_data_nmt``).

    Vocabularies use ``min_freq=2`` and reserve ``<pad>``, ``<bos>``, ``<eos>`` (after
    ``<unk>`` = 0). Each batch is ``(X, X_valid_len, Y, Y_valid_len)`` with X, Y of shape
    (batch_size, num_steps) int64 and valid lengths (batch_size,) int64. For held-out pairs,
    tokenize yourself and use :func:`split_nmt`.

    Returns:
        ``(train_iter, src_vocab, tgt_vocab)``.
    """
    _check_positive_int(batch_size, "batch_size")
    _check_positive_int(num_steps, "num_steps")
    _check_num_examples(num_examples)
    text = preprocess_nmt(read_data_nmt())
    source, target = tokenize_nmt(text, num_examples)
    return _load_pairs(source, target, batch_size, num_steps)


# ---------------------------------------------------------------------------------------------
# English–Chinese
# ---------------------------------------------------------------------------------------------

def read_data_cmn() -> str:
    """The raw English–Chinese text (``cmn.txt``): ``English<TAB>Chinese<TAB>attribution`` per
    line, shortest first. Prints one line naming the source."""
    return _read_pairs_file("cmn-eng")


_WHITESPACE = re.compile(r"\s+")


def preprocess_cmn(text: str) -> str:
    """Preprocess English–Chinese pairs: the English side as :func:`preprocess_nmt`, all
    whitespace removed from the Chinese side, further columns (attribution) dropped.

    Returns ``English<TAB>Chinese`` lines; lines without a tab are dropped.
    """
    if not isinstance(text, str):
        raise ValueError(f"text must be a str; got {type(text).__name__}")
    lines = []
    for line in text.split("\n"):
        parts = line.split("\t")
        if len(parts) >= 2:
            eng = preprocess_nmt(parts[0]).replace("\t", " ")
            lines.append(f"{eng}\t{_WHITESPACE.sub('', parts[1])}")
    return "\n".join(lines)


def tokenize_cmn(text: str, num_examples: int | None = None
                 ) -> tuple[list[list[str]], list[list[str]]]:
    """Tokenize (preprocessed) English–Chinese pairs: English into words at whitespace,
    Chinese into single characters, whitespace dropped and punctuation (``。？！，``) kept as
    tokens of their own.

    Returns:
        ``(source, target)``: two lists of equal length N of token lists.
    """
    if not isinstance(text, str):
        raise ValueError(f"text must be a str; got {type(text).__name__}")
    _check_num_examples(num_examples)
    source, target = [], []
    for src, tgt in _pairs(text, num_examples):
        source.append(src.split())
        target.append([ch for ch in tgt if not ch.isspace()])
    return source, target


def load_data_cmn(batch_size: int, num_steps: int, num_examples: int | None = 2000
                  ) -> tuple[_torch_data.DataLoader, Vocab, Vocab]:
    """The first ``num_examples`` English–Chinese pairs as mini-batches, Chinese as characters.

    Same vocabularies and batch layout as :func:`load_data_nmt`: ``(X, X_valid_len, Y,
    Y_valid_len)``, X and Y (batch_size, num_steps) int64. Join predicted Chinese tokens with
    ``''``.

    Returns:
        ``(train_iter, src_vocab, tgt_vocab)``.
    """
    _check_positive_int(batch_size, "batch_size")
    _check_positive_int(num_steps, "num_steps")
    _check_num_examples(num_examples)
    source, target = tokenize_cmn(preprocess_cmn(read_data_cmn()), num_examples)
    return _load_pairs(source, target, batch_size, num_steps)


# ---------------------------------------------------------------------------------------------
# text8
# ---------------------------------------------------------------------------------------------

_SENTENCE_WORDS = 10_000  # as gensim's Text8Corpus
_DIGITS = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine"]
_NON_LETTERS = re.compile(r"[^a-z]+")


def _text8_clean(text: str) -> str:
    """text8's cleaning (Mahoney's wikifil.pl, after markup removal): lowercase, digits spelled
    out one by one, every other non-letter a space, spaces collapsed."""
    text = text.lower()
    for digit, word in enumerate(_DIGITS):
        text = text.replace(str(digit), f" {word} ")
    return _NON_LETTERS.sub(" ", text).strip()


def _gensim_text8(cache: Path) -> tuple[Path | None, str]:
    """Build (once, cached when the cache is writable) a text8-style corpus from gensim's
    bundled Wikipedia sample. Returns ``(path or None, text if not cached)``."""
    target = cache / "text8-gensim-sample" / "text8"
    if target.is_file():
        return target, ""
    import bz2

    from gensim.corpora.wikicorpus import extract_pages, filter_wiki
    from gensim.test.utils import datapath

    pieces = []
    with bz2.open(datapath(_GENSIM_WIKI), "rb") as f:
        for _title, wikitext, _pageid in extract_pages(f, filter_namespaces=("0",)):
            if not wikitext or wikitext.lstrip().lower().startswith("#redirect"):
                continue
            cleaned = _text8_clean(filter_wiki(wikitext))
            if cleaned:
                pieces.append(cleaned)
    text = " ".join(pieces)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=target.parent, suffix=".part")
        with os.fdopen(fd, "w", encoding="ascii") as out:
            out.write(text)
        os.replace(tmp, target)
        return target, ""
    except OSError:
        return None, text


def _chunk_words(words: Iterable[str], max_words: int | None) -> list[list[str]]:
    sentences: list[list[str]] = []
    current: list[str] = []
    if max_words is not None:
        words = itertools.islice(words, max_words)
    for word in words:
        current.append(word)
        if len(current) == _SENTENCE_WORDS:
            sentences.append(current)
            current = []
    if current:
        sentences.append(current)
    return sentences


def _iter_words(path: Path) -> Iterable[str]:
    """Stream the words of a one-line file without reading it whole."""
    rest = ""
    with open(path, encoding="ascii", errors="replace") as f:
        for chunk in iter(lambda: f.read(1 << 20), ""):
            chunk = rest + chunk
            words = chunk.split()
            if chunk and not chunk[-1].isspace() and words:
                rest = words.pop()
            else:
                rest = ""
            yield from words
    if rest:
        yield rest


def load_text8(max_words: int | None = None) -> list[list[str]]:
    """The text8 corpus as gensim-ready sentences: lists of at most 10,000 words (as gensim's
    ``Text8Corpus``), the first ``max_words`` words when given.

    Sources in order: ``$D2LMINI_DATA_DIR/text8/text8``, the cache, a download (unzipped and
    checked to be exactly 100,000,000 bytes), else a text8-style corpus (same cleaning: lowercase
    a-z, digits spelled out) built from the English Wikipedia sample bundled with gensim (about
    450 thousand words), cached after the first build. Prints one line naming the source.
    """
    if max_words is not None:
        _check_positive_int(max_words, "max_words")
    path, source = _resolve("text8")
    if path is not None:
        if "downloaded" in source and path.stat().st_size != _TEXT8_NUM_BYTES:
            raise ChecksumError(f"text8: {path} has {path.stat().st_size} bytes, expected "
                                f"{_TEXT8_NUM_BYTES}; delete it and retry")
        sentences = _chunk_words(_iter_words(path), max_words)
        _announce("text8", source)
        return sentences
    built, text = _gensim_text8(get_cache_dir())
    words = _iter_words(built) if built is not None else iter(text.split())
    sentences = _chunk_words(words, max_words)
    num = sum(len(s) for s in sentences)
    where = f"cached at {built}" if built is not None else "not cached: cache not writable"
    _announce("text8", f"gensim Wikipedia sample (offline fallback, text8-style cleaning, "
                       f"{num:,} words used, {where}; {source})")
    return sentences
