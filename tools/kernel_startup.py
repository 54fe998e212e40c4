"""Run at the start of every kernel of the book build (``PYTHONSTARTUP``, set by
``tools/build_book.py``): time each executed cell.

After every cell the kernel appends one JSON line ``{"cell": <sha256 of the cell's source, 16 hex
digits>, "seconds": <wall time>}`` to the file named by ``D2LMINI_CELL_TIMES`` (the edition's
jupyter cache folder, so that the times stay with the outputs they made). The execution report
(``tools/book_sphinx/timing.py``) lists each chapter's slowest cell from it and compares the
slowest with the build's per-cell limit. Nothing is defined in the notebook's namespace.
"""


def _time_cells() -> None:
    import hashlib
    import json
    import os
    import time

    path = os.environ.get("D2LMINI_CELL_TIMES")
    shell = get_ipython()  # noqa: F821  (IPython runs this file in the user namespace)
    if not path or shell is None:
        return
    started: dict[str, object] = {}

    def before(info) -> None:
        started["source"], started["t"] = info.raw_cell, time.perf_counter()

    def after(result) -> None:
        if "t" not in started:
            return
        seconds = time.perf_counter() - started.pop("t")
        digest = hashlib.sha256(str(started.pop("source")).encode("utf-8")).hexdigest()[:16]
        try:
            with open(path, "a", encoding="utf-8") as f:
                f.write(json.dumps({"cell": digest, "seconds": round(seconds, 3)}) + "\n")
        except OSError:
            pass  # timing is a report, never a reason for a chapter to fail

    shell.events.register("pre_run_cell", before)
    shell.events.register("post_run_cell", after)


_time_cells()
del _time_cells
