"""The package's version, in a module of its own: the modules that name it (``datahub``'s
announcements) import it from here rather than from the package face ``d2lmini/__init__.py``,
so that no module imports upwards. Keep it equal to ``version`` in ``pyproject.toml``."""

__version__ = "0.1.0"
