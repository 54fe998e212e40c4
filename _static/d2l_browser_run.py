"""Run one code cell the way a notebook does, for "Run in your browser".

The page (``d2l-browser.js``, in Pyodide) and the build (``tools/build/book_sphinx/browser.py``, in
CPython, when it chooses the cells that run in the page) both run cells with these functions, so
a cell runs the same way in both places. Standard library only.
"""
import ast
import base64
import io
import os
import sys
import traceback

os.environ.setdefault("MPLBACKEND", "Agg")  # figures come back as PNG, not in a window


def run_cell(code, namespace):
    """Run ``code`` in ``namespace`` (a dict, shared by the cells); print the value of a last
    expression that is not None, as a notebook shows it. Return ``(stdout, stderr, error)``:
    what the cell printed to each, and its traceback (without this function's frames; a syntax
    error's message alone) or None."""
    out, err, error = io.StringIO(), io.StringIO(), None
    saved = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = out, err
    try:
        tree = ast.parse(code)
        last = tree.body.pop() if tree.body and isinstance(tree.body[-1], ast.Expr) else None
        exec(compile(tree, "<cell>", "exec"), namespace)
        if last is not None:
            value = eval(compile(ast.Expression(last.value), "<cell>", "eval"), namespace)
            if value is not None:
                print(repr(value))
    except BaseException as e:  # the cell's error, whatever it is, is its output
        frames = [] if isinstance(e, SyntaxError) else traceback.extract_tb(e.__traceback__)
        cell = [f for f in frames if f.filename != run_cell.__code__.co_filename]
        error = ("Traceback (most recent call last):\n" + "".join(traceback.format_list(cell))
                 if cell else "") + "".join(traceback.format_exception_only(type(e), e))
    finally:
        sys.stdout, sys.stderr = saved
    return out.getvalue(), err.getvalue(), error


def take_figures(dpi=80):
    """Matplotlib's open figures as PNG files in base64, closed afterwards; [] when pyplot has
    not been imported."""
    plt = sys.modules.get("matplotlib.pyplot")
    if plt is None:
        return []
    figures = []
    for number in plt.get_fignums():
        buf = io.BytesIO()
        plt.figure(number).savefig(buf, format="png", bbox_inches="tight", dpi=dpi)
        figures.append(base64.b64encode(buf.getvalue()).decode("ascii"))
    plt.close("all")
    return figures
