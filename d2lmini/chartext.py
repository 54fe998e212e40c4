"""Character-level text for language models: Tiny Shakespeare, its characters as a vocabulary, a
held-out tail, and random training windows.

``read_tinyshakespeare`` finds the file as every data set is found (:mod:`d2lmini.datahub`:
local data directory, download cache, checksummed download). With none of these it returns the
English sentences of this project's offline corpus (written and grammar-generated, shipped with
the package; see :mod:`d2lmini.data`), one per line: plainer and more repetitive text than
Shakespeare, so a model reaches lower losses on it and its samples read like the grammar.

Tiny Shakespeare: about 40,000 lines of Shakespeare's plays collected for character-level
language modelling (Karpathy's char-rnn); the plays are in the public domain.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

import torch

from .datahub import DataSource, OfflineCorpus, log, resolve
from .utils import check_number, check_positive_int

__all__ = ["read_tinyshakespeare", "CharCorpus", "random_windows"]


def _offline_tinyshakespeare() -> OfflineCorpus:
    """The offline stand-in of ``tinyshakespeare`` (the registry's builder): the distinct
    English sentences of the shipped English–French corpus, in a fixed shuffled order."""
    from .data import _shipped_corpus
    text, _, _ = _shipped_corpus("fra-eng")
    english = list(dict.fromkeys(line.split("\t")[0] for line in text.splitlines() if line))
    random.Random(0).shuffle(english)
    return OfflineCorpus(f"{len(english):,} English sentences of this project's offline "
                         "corpus, not Shakespeare", text="\n".join(english) + "\n",
                         detail_zh=f"本项目离线语料中的 {len(english):,} 个英语句子，"
                                   "不是莎士比亚")


def read_tinyshakespeare(*, return_source: bool = False) -> str | tuple[str, DataSource]:
    """The text of Tiny Shakespeare (``input.txt``, 1,115,394 characters); offline, the stand-in
    described in the module's docstring. Logs one line naming the source; ``return_source=True``
    also returns the :class:`~d2lmini.DataSource`, as ``(text, source)``."""
    source = resolve("tinyshakespeare")
    log.info("%s", source)
    text = source.read_text()
    return (text, source) if return_source else text


@dataclass
class CharCorpus:
    """A text as character ids: the vocabulary is the sorted set of its characters, the first
    ``1 - val_fraction`` of the text is for training and the rest is held out (a contiguous
    tail, so no held-out window overlaps a training one).

    Attributes:
        chars: the vocabulary, ``chars[i]`` is the character of id ``i``.
        train, val: 1-D ``torch.long`` tensors of ids.
    """

    text: str = field(repr=False)
    val_fraction: float = 0.1
    chars: list[str] = field(init=False)
    train: torch.Tensor = field(init=False, repr=False)
    val: torch.Tensor = field(init=False, repr=False)

    def __post_init__(self) -> None:
        if not isinstance(self.text, str) or len(self.text) < 2:
            raise ValueError("text must be a str of at least 2 characters")
        check_number(self.val_fraction, "val_fraction", above=0, below=1)
        self.chars = sorted(set(self.text))
        self._index = {c: i for i, c in enumerate(self.chars)}
        ids = self.encode(self.text)
        cut = int(len(ids) * (1 - self.val_fraction))
        self.train, self.val = ids[:cut], ids[cut:]

    @property
    def vocab_size(self) -> int:
        return len(self.chars)

    def encode(self, text: str) -> torch.Tensor:
        """``text`` -> ids ``(len(text),)``; a character outside the vocabulary is an error."""
        unknown = sorted(set(text) - self._index.keys())
        if unknown:
            raise ValueError(f"characters not in the vocabulary: {''.join(unknown)!r}")
        return torch.tensor([self._index[c] for c in text], dtype=torch.long)

    def decode(self, ids: torch.Tensor | list[int]) -> str:
        """ids (a 1-D tensor or a list) -> text."""
        return "".join(self.chars[int(i)] for i in ids)


def random_windows(ids: torch.Tensor, batch_size: int, seq_len: int,
                   generator: torch.Generator | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    """``batch_size`` windows of ``seq_len`` ids drawn at random offsets of ``ids`` ``(N,)``:
    inputs ``X`` ``(B, T)`` and targets ``Y`` ``(B, T)``, each target the next id."""
    check_positive_int(batch_size, "batch_size")
    check_positive_int(seq_len, "seq_len")
    if ids.dim() != 1 or len(ids) <= seq_len:
        raise ValueError(f"ids must be 1-D and longer than seq_len = {seq_len}; got shape "
                         f"{tuple(ids.shape)}")
    starts = torch.randint(0, len(ids) - seq_len, (batch_size,), generator=generator)
    index = starts[:, None] + torch.arange(seq_len + 1)  # (B, T + 1)
    windows = ids[index]
    return windows[:, :-1], windows[:, 1:]
