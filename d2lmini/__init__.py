"""d2lmini: the tested helper library of the bilingual Transformer textbook.

Names and signatures follow the ``d2l`` package ("Dive into Deep Learning") where one
exists, so that readers of d2l feel at home; every public name is exported here.
"""

from .utils import *  # noqa: F401,F403
from .attention import *  # noqa: F401,F403
from .transformer import *  # noqa: F401,F403
from .data import *  # noqa: F401,F403
from .train import *  # noqa: F401,F403
from .plot import *  # noqa: F401,F403
from . import attention, data, plot, train, transformer, utils

__version__ = "0.1.0"

__all__ = (
    utils.__all__
    + attention.__all__
    + transformer.__all__
    + data.__all__
    + train.__all__
    + plot.__all__
)
