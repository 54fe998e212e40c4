"""One chapter notebook executed through nbclient (the GPU job's part b runs one per process,
so that a chapter over its time is killed with its kernel).

    python -m tools.gpu.chapter NOTEBOOK --cwd book/en --timeout 300

Prints one JSON line: ``status`` (``ok``, ``error``), ``seconds``, the first error (cell
number, exception name and message) and the device the chapter's ``d2l.try_gpu()`` picked.
"""
from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

PROBE = "import d2lmini as _d2l; print('[gpu-job] device', _d2l.try_gpu())"


def first_error(nb) -> dict | None:
    """The first error output of the executed notebook: ``{cell, ename, evalue}``."""
    code_cells = [c for c in nb.cells if c.cell_type == "code"]
    for number, cell in enumerate(code_cells, 1):
        for output in cell.get("outputs", []):
            if output.get("output_type") == "error":
                return {"cell": number, "ename": output.get("ename"),
                        "evalue": str(output.get("evalue"))[:500]}
    return None


def device_of(nb) -> str | None:
    for output in nb.cells[-1].get("outputs", []):
        for line in output.get("text", "").splitlines():
            if line.startswith("[gpu-job] device"):
                return line.split(None, 2)[-1]
    return None


def run(path: Path, cwd: Path, timeout: float) -> dict:
    import nbformat
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError, CellTimeoutError

    nb = nbformat.read(path, as_version=4)
    nb.cells.append(nbformat.v4.new_code_cell(PROBE))
    client = NotebookClient(nb, timeout=timeout, kernel_name="python3",
                            resources={"metadata": {"path": str(cwd)}})
    tic, status = time.perf_counter(), "ok"
    try:
        client.execute()
    except CellTimeoutError:
        status = "timeout"
    except CellExecutionError:
        status = "error"
    return {"status": status, "seconds": time.perf_counter() - tic,
            "first_error": first_error(nb), "device": device_of(nb)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("notebook", type=Path)
    ap.add_argument("--cwd", type=Path, required=True)
    ap.add_argument("--timeout", type=float, default=300)
    args = ap.parse_args(argv)
    print(json.dumps(run(args.notebook, args.cwd, args.timeout)), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
