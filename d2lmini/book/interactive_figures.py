"""Interactive figures: a Vega-Lite chart shown live in the HTML book, with the matplotlib figure
as the static image the PDF prints and the fallback a page without JavaScript shows."""

from __future__ import annotations

import base64
import html
import io
import json
import re
from typing import Any

import matplotlib
import matplotlib.pyplot as plt

__all__ = ["InteractiveFigure", "interactive"]

#: The media type of a Vega-Lite 6 specification (what Altair 6 writes): the one given to a
#: specification without a ``$schema``.
VEGALITE_MIME = "application/vnd.vegalite.v6+json"


class InteractiveFigure:
    """A figure to explore in the book's pages: a Vega-Lite chart with the static figure that
    stands for it where no chart can run.

    Jupyter shows it through its rich display, in three forms: ``text/html``, a
    ``<div class="d2l-vega">`` holding the chart's specification (``data-spec``) and the static
    figure as an image (the book's pages replace the image by the live chart, offline, with the
    Vega libraries they carry; where no script runs, the image stays); ``image/svg+xml``, the
    static figure, which the PDF prints; and the specification itself (:data:`VEGALITE_MIME`),
    which JupyterLab can draw.

    Attributes:
        spec: the Vega-Lite specification (a JSON-serialisable dict).
        svg: the static figure, as SVG text.
    """

    def __init__(self, spec: dict, svg: str) -> None:
        self.spec, self.svg = spec, svg

    def to_html(self) -> str:
        """The ``text/html`` form: the chart's specification and the static figure as an image
        whose ``alt`` the book's build fills from the cell's alt text."""
        data = json.dumps(self.spec, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        image = base64.b64encode(self.svg.encode("utf-8")).decode("ascii")
        return (f'<div class="d2l-vega" data-spec="{html.escape(data, quote=True)}">'
                f'<img class="d2l-vega-static" alt="" src="data:image/svg+xml;base64,{image}">'
                "</div>")

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        # the media type names the major version of the schema (Altair 5 writes v5, Altair 6 v6)
        major = re.search(r"/v(\d+)[.\w-]*\.json$", str(self.spec.get("$schema", "")))
        mime = f"application/vnd.vegalite.v{major.group(1)}+json" if major else VEGALITE_MIME
        return {"text/html": self.to_html(), "image/svg+xml": self.svg, mime: self.spec,
                "text/plain": repr(self)}

    def __repr__(self) -> str:
        return f"<InteractiveFigure: {self.spec.get('description') or 'Vega-Lite chart'}>"


def interactive(chart: Any, figure: matplotlib.figure.Figure) -> InteractiveFigure:
    """An interactive figure from a Vega-Lite ``chart`` and the static matplotlib ``figure``
    that stands for it in print (the same data, a representative setting of the controls).

    ``chart`` is an Altair chart (anything with ``to_dict()``) or a Vega-Lite specification as a
    dict. The figure is drawn to SVG and closed, so that Jupyter does not show it a second time.

    Raises:
        TypeError: ``chart`` is neither, or ``figure`` is not a matplotlib figure.
    """
    if isinstance(chart, dict):
        spec = chart
    elif callable(getattr(chart, "to_dict", None)):
        spec = chart.to_dict()
    else:
        raise TypeError("chart must be an Altair chart or a Vega-Lite specification (dict); got "
                        f"{type(chart).__name__}")
    if not isinstance(figure, matplotlib.figure.Figure):
        raise TypeError(f"figure must be a matplotlib Figure; got {type(figure).__name__}")
    buffer = io.StringIO()
    with matplotlib.rc_context({"svg.hashsalt": "d2lmini"}):  # the same SVG on every run
        figure.savefig(buffer, format="svg", bbox_inches="tight", metadata={"Date": None})
    plt.close(figure)
    return InteractiveFigure(spec, buffer.getvalue())
