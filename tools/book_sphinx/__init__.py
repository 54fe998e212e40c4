"""Sphinx extensions of the two-edition book, one module per feature.

* :mod:`book_sphinx.i18n` — hreflang links, the language switcher, launch buttons that open the
  exported notebook of the page's edition;
* :mod:`book_sphinx.student` — the student edition: gated solutions removed with their cells;
* :mod:`book_sphinx.cjk` — soft line breaks between two Chinese characters dropped.

``tools/build_book.py`` puts ``tools/`` on ``sys.path`` and lists all three in ``extensions``.
"""
