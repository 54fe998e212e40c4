"""d2lmini: the tested helper library of the bilingual Transformer textbook.

Names and signatures follow the ``d2l`` package ("Dive into Deep Learning") where one
exists, so that readers of d2l feel at home; every public name is exported here::

    import d2lmini as d2l
"""

from . import attention, data, decode, distributed, plotting, train, transformer, utils
from .utils import *  # noqa: F401,F403
from .attention import *  # noqa: F401,F403
from .transformer import *  # noqa: F401,F403
from .data import *  # noqa: F401,F403
from .train import *  # noqa: F401,F403
from .decode import *  # noqa: F401,F403
from .plotting import *  # noqa: F401,F403
from .distributed import *  # noqa: F401,F403

__version__ = "0.1.0"

#: The modules by concept, in the order the book introduces them.
MODULES = (utils, attention, transformer, data, train, decode, plotting, distributed)

__all__ = [name for module in MODULES for name in module.__all__]
