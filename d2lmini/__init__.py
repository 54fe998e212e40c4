"""d2lmini: the Transformer of the bilingual textbook, as a tested library.

    import d2lmini as d2l        # attention, the Transformer, data, training, decoding, metrics
    from d2lmini import book     # the book's own plumbing: claims, bilingual labels, caches, ...

Names and signatures follow the ``d2l`` package ("Dive into Deep Learning") where one exists,
so that readers of d2l feel at home. The top level holds what a reader of the chapters uses to
build, train and evaluate a model; the machinery that makes the chapters an executed, checked,
bilingual book is :mod:`d2lmini.book`, and argument checks and data tables stay in their modules
(``d2lmini.utils.check_int``, ``d2lmini.datahub.PUBLISHED_SHA256``).
"""

from ._version import __version__  # noqa: F401  (one place: d2lmini/_version.py)
from . import (ablation, attention, book, chartext, data, datahub, decode, distributed, metrics,  # noqa: F401
               lm, plotting, text8, train, transformer, utils)
from .attention import *  # noqa: F401,F403
from .transformer import *  # noqa: F401,F403
from .data import *  # noqa: F401,F403
from .text8 import *  # noqa: F401,F403
from .chartext import *  # noqa: F401,F403
from .train import *  # noqa: F401,F403
from .decode import *  # noqa: F401,F403
from .metrics import *  # noqa: F401,F403
from .plotting import *  # noqa: F401,F403
from .distributed import *  # noqa: F401,F403
from .lm import *  # noqa: F401,F403
from .ablation import *  # noqa: F401,F403
from .utils import Timer, set_seed, try_gpu  # noqa: F401
from .datahub import (DATA_HUB, DATA_URL, DATASETS, ChecksumError, Dataset,  # noqa: F401
                      DataSource, OfflineCorpus, OfflineError, download, download_extract,
                      get_cache_dir, locate, offline_corpus, resolve)

#: The modules by concept, in the order the book introduces them (the API page documents each,
#: then the modules of :data:`d2lmini.book.MODULES`).
MODULES = (utils, attention, transformer, datahub, data, text8, train, decode, metrics, plotting,
           distributed, chartext, lm, ablation)

#: Names of the modules that stay in their module, not at the top level.
_IN_THEIR_MODULE = {"check_int", "check_number", "check_positive_int", "check_non_negative_int",
                    "check_bool", "in_notebook", "DATASET_FILES", "PUBLISHED_SHA256"}

#: The names of ``import d2lmini as d2l``.
__all__ = [name for module in MODULES for name in module.__all__
           if name not in _IN_THEIR_MODULE]
