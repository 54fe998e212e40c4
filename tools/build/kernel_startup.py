"""Run at the start of every kernel of the book build (``PYTHONSTARTUP``, set by
``tools/build/build_book.py``): time each executed cell and record which data sets it read.

After every cell the kernel appends one JSON line ``{"cell": <sha256 of the cell's source, 16 hex
digits>, "seconds": <wall time>, "reads": [<data sets the cell looked for>]}`` to the file named
by ``D2LMINI_CELL_TIMES`` (the edition's jupyter cache folder, so that the times stay with the
outputs they made). The execution report (``tools/build/book_sphinx/timing.py``) lists each
chapter's slowest cell from it and compares the slowest with the build's per-cell limit; the build
(``build_book.share_executions``) reads ``reads`` to give a chapter that read no data set the two
builds have differently the outputs the other build made. ``reads`` comes from the file this kernel
names in ``D2LMINI_DATA_READ_LOG`` (``d2lmini.datahub`` appends to it, also in processes a cell
starts), emptied after each cell; ``null`` when it could not be read. Nothing is defined in the
notebook's namespace.
"""


def _time_cells() -> None:
    import atexit
    import hashlib
    import json
    import os
    import tempfile
    import time

    path = os.environ.get("D2LMINI_CELL_TIMES")
    shell = get_ipython()  # noqa: F821  (IPython runs this file in the user namespace)
    if not path or shell is None:
        return
    started: dict[str, object] = {}
    fd, reads_log = tempfile.mkstemp(prefix="d2lmini-data-read-", suffix=".log")
    os.close(fd)
    os.environ["D2LMINI_DATA_READ_LOG"] = reads_log
    atexit.register(lambda: os.path.exists(reads_log) and os.unlink(reads_log))

    def before(info) -> None:
        started["source"], started["t"] = info.raw_cell, time.perf_counter()

    def after(result) -> None:
        if "t" not in started:
            return
        seconds = time.perf_counter() - started.pop("t")
        digest = hashlib.sha256(str(started.pop("source")).encode("utf-8")).hexdigest()[:16]
        try:
            with open(reads_log, "r+", encoding="utf-8") as f:
                reads = sorted(set(f.read().split()))
                f.seek(0)
                f.truncate()
        except OSError:
            reads = None  # unknown: the build will not share this chapter's outputs
        record = {"cell": digest, "seconds": round(seconds, 3), "reads": reads}
        try:
            with open(path, "a", encoding="utf-8") as f:
                f.write(json.dumps(record) + "\n")
        except OSError:
            pass  # timing is a report, never a reason for a chapter to fail

    shell.events.register("pre_run_cell", before)
    shell.events.register("post_run_cell", after)


_time_cells()
del _time_cells
