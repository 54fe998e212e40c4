"""The classroom: the chapters' exercises (``exercises``), notebooks for students
(``export_notebooks``), graded assignments (``assign``), a classroom dry run (``dry_run``, with
each chapter's typical mistakes in ``cases/<chapter>.yml``), the class report (``class_report``)
and the check that no public test gives an answer away (``answer_leaks``)."""
