#!/usr/bin/env python3
"""Write the offline corpora that d2lmini ships, from the project's grammar (tools/corpus).

    python -m tools.corpus.write_offline_corpus          # d2lmini/corpora/*-offline.txt.gz, .json
    python -m tools.corpus.write_offline_corpus --check  # exit 1 where they differ from the grammar

A reader without the Tatoeba data trains on these corpora; the book's offline numbers depend on
every byte, so a change to the grammar, its tables or the written pairs that alters them is
deliberate: write them, and update the checksums pinned in tests/library/test_data.py with the
reason.
"""
from __future__ import annotations

import argparse
import sys

from tools import corpus as offline_corpus


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true",
                        help="compare the shipped files with the grammar's instead of writing")
    args = parser.parse_args(argv)
    if args.check:
        differ = offline_corpus.check()
        for file in differ:
            print(f"differs from the grammar's: d2lmini/corpora/{file}", file=sys.stderr)
        return 1 if differ else 0
    for path in offline_corpus.write():
        print(f"wrote {path.relative_to(offline_corpus.CORPORA.parents[1])}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
