"""Sphinx extensions of the two-edition book, one module per feature (``_config.yml`` lists them
under ``sphinx.extra_extensions`` as ``tools.build.book_sphinx.<name>``; Sphinx runs from the
repository root, so the package imports without any change to ``sys.path``).

* :mod:`book_sphinx.i18n` — hreflang links, the language switcher, launch buttons that open the
  exported notebook of the page's edition;
* :mod:`book_sphinx.student` — the student edition: gated solutions removed with their cells;
* :mod:`book_sphinx.cjk` — soft line breaks between two Chinese characters dropped;
* :mod:`book_sphinx.reader` — the PDF button; issue reports name the edition;
* :mod:`book_sphinx.claims`, :mod:`book_sphinx.timing` — the execution report;
* :mod:`book_sphinx.classroom` — the instructors' page: a classroom dry run's report;
* :mod:`book_sphinx.vega` — interactive figures (Vega-Lite), offline;
* :mod:`book_sphinx.translator` — chapter 6's translator in the page (ONNX Runtime Web);
* :mod:`book_sphinx.browser` — chapters 2 and 3's NumPy cells run in the page (Pyodide);
* :mod:`book_sphinx.apipage` — the API page, one section per module of ``d2lmini.MODULES``;
* :mod:`book_sphinx.latex` — the PDF edition (added by ``tools/build/build_pdf.py``).
"""
