"""d2lmini: the tested helper library of the bilingual Transformer textbook.

Names and signatures follow the ``d2l`` package ("Dive into Deep Learning") where one
exists, so that readers of d2l feel at home; every public name is exported here::

    import d2lmini as d2l
"""

from ._version import __version__  # noqa: F401  (one place: d2lmini/_version.py)
from . import (attention, cache, claims, data, datahub, decode, distributed,  # noqa: E402
               export, metrics, plotting, text8, train, transformer, utils)
from .utils import *  # noqa: F401,F403,E402
from .claims import *  # noqa: F401,F403,E402
from .attention import *  # noqa: F401,F403,E402
from .transformer import *  # noqa: F401,F403,E402
from .datahub import *  # noqa: F401,F403,E402
from .data import *  # noqa: F401,F403,E402
from .text8 import *  # noqa: F401,F403,E402
from .train import *  # noqa: F401,F403,E402
from .decode import *  # noqa: F401,F403,E402
from .metrics import *  # noqa: F401,F403,E402
from .export import *  # noqa: F401,F403,E402
from .plotting import *  # noqa: F401,F403,E402
from .distributed import *  # noqa: F401,F403,E402
from .cache import *  # noqa: F401,F403,E402

#: The modules by concept, in the order the book introduces them (the API page documents each).
MODULES = (utils, claims, attention, transformer, datahub, data, text8, train, decode, metrics,
           export, plotting, distributed, cache)

#: The names of ``import d2lmini as d2l``: every module's.
__all__ = [name for module in MODULES for name in module.__all__]
