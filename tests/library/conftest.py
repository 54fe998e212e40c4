"""Fixtures shared by the library tests."""

from __future__ import annotations

import pytest

import d2lmini as d2l


@pytest.fixture
def tiny_vocab() -> d2l.Vocab:
    """A 12-token ``d2l.Vocab`` for toy tasks: ``<unk>`` 0, ``<pad>`` 1, ``<bos>`` 2, ``<eos>``
    3, then the words ``w1`` … ``w8`` as 4 … 11 (one-digit names, so that the alphabetical
    order of equally frequent tokens keeps them in order)."""
    return d2l.Vocab([f"w{i}" for i in range(1, 9)],
                     reserved_tokens=["<pad>", "<bos>", "<eos>"])
