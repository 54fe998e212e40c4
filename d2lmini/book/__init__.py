"""The book's own plumbing, apart from the Transformer: what the chapters need to be a bilingual,
executed, checked book rather than what a reader needs to build a model.

    from d2lmini import book

* :mod:`~d2lmini.book.claims` — ``claim``, ``choose`` and ``glue_ratio``: a sentence that
  interprets a result is guarded, chosen by the run, or its ratio bounded;
* :mod:`~d2lmini.book.language` — ``label(en, zh)``, the figure's string in the edition's
  language, and the font for Chinese labels;
* :mod:`~d2lmini.book.interactive_figures` — ``interactive``: a live Vega-Lite chart beside its
  static matplotlib figure;
* :mod:`~d2lmini.book.cache` — ``load_or_train``: trained weights kept on disk under a key of the
  data, the configuration and the library, so the build trains a model once (``load_or_compute``
  keeps the numbers of many small trainings the same way);
* :mod:`~d2lmini.book.records` — ``recorded_benchmark``: a result ``bench/run.py`` recorded,
  shown beside what the build ran;
* :mod:`~d2lmini.book.translator` — ``export_translator`` and ``TranslatorPanel``: chapter 6's
  model as ONNX graphs and the panel that runs them in the page.
"""

from . import cache, claims, interactive_figures, language, records, translator  # noqa: F401
from .cache import *  # noqa: F401,F403
from .claims import *  # noqa: F401,F403
from .interactive_figures import *  # noqa: F401,F403
from .language import *  # noqa: F401,F403
from .records import *  # noqa: F401,F403
from .translator import *  # noqa: F401,F403

#: The modules of the book's plumbing, in the order the API page lists them.
MODULES = (claims, language, interactive_figures, cache, records, translator)

__all__ = [name for module in MODULES for name in module.__all__]
