"""The book's machinery, one folder per job; run a tool from the repository root with
``python -m tools.<job>.<tool>`` (``make`` does it for the usual commands).

* ``tools.setup`` — ``dev``: the virtual environment, packages and system packages behind every
  ``make`` command, and ``make doctor``;
* ``tools.build`` — the book: ``build_book`` (both editions), ``build_pdf``, ``package_site``
  (the offline zip), ``kernel_startup`` (each kernel's cell timing), the Sphinx extensions in
  ``book_sphinx``, the generated figures in ``figures``;
* ``tools.classroom`` — exercises and grading: ``exercises`` (reading a chapter's exercises),
  ``export_notebooks`` (the chapters and student versions as notebooks), ``assign`` (otter-grader
  assignments and grading), ``dry_run`` (a made-up class graded by a chapter's tests, with the
  typical mistakes in ``cases/``), ``class_report``, ``answer_leaks``;
* ``tools.corpus`` — the bilingual grammar that writes the offline corpora d2lmini ships
  (``python -m tools.corpus.write_offline_corpus``);
* ``tools.checks`` — source checks with a repair mode: ``sync_save_blocks`` (the ``# @save``
  cells equal the package) and ``zh_prose`` (Chinese line breaks);
* ``tools.gpu`` — the GPU job: ``pack`` (``make gpu-pack``: ``.gpu/``), ``unpack`` and ``job``
  (run on the GPU machine by ``.gpu/run.sh``; ``chapter`` executes one notebook), ``rehearse``
  (``make gpu-rehearse``: the same job on the CPU in a fresh venv);
* shared by the jobs: ``bookmeta`` (the editions, the table of contents, chapter budgets),
  ``myst`` (reading the chapters' MyST Markdown), ``ci_times`` (where a CI run's time goes).

A job imports the shared modules and the jobs listed before it, never one listed after it.
"""
