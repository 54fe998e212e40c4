"""A class's results for the instructor: ``python -m tools.classroom.assign report grades.csv``.

Reads the CSV that ``assign.py grade --csv`` writes (a row per submission: ``submission``,
``total``, ``possible`` and the points of each graded exercise) and, when it is there, the JSON
written next to it (``grades.json``: every test case of the autograder, public or hidden, with its
points, and each submission's failing test cases with the first lines of their error). Prints, in
the instructor's language, and optionally writes as an HTML page:

* per exercise: the points it is worth, the class's mean, how many got full marks, and the test
  that failed most often;
* the exercise that most students did not get full marks on, and its most frequent failing test;
* per student: the points, and what failed (the notes of the grader first, such as a limit
  reached, a broken file or tampering; then the exercises short of full marks, with the failing
  tests and their errors).

Standard library only; every text put in the page goes through :func:`html.escape`.
"""
from __future__ import annotations

import csv
import html
import json
import unicodedata
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from tools.classroom import exercises

FIXED_COLUMNS = ("submission", "total", "possible")

WORDS = {
    "en": {
        "title": "Class report", "chapter": "chapter", "students": "submissions",
        "exercise": "exercise", "points": "points", "mean": "mean", "full": "full marks",
        "top_test": "most frequent failing test",
        "heading": "{title} (chapter: {chapter})",
        "top_cell": "{test} ({kind}, {c})", "short": "{label} ({score} / {possible})",
        "case": "{test} [{kind}]: {error}", "item": "* {name}: {points}",
        "hardest_line": "Most often failed: {label}: {k} of {n} submissions without full marks",
        "top_line": "most frequent failing test: {test} ({kind}), failed by {c}",
        "no_details": "no test details (the JSON next to the CSV is missing)",
        "all_full": "Every submission got full marks.", "per_student": "Per submission",
        "submission": "submission", "failed": "what failed", "nothing": "nothing",
        "hidden": "hidden test", "public": "public check", "none": "-",
        "note": "note: {text}",
    },
    "zh": {
        "title": "全班成绩报告", "chapter": "章节", "students": "份作业",
        "exercise": "练习", "points": "分值", "mean": "平均分", "full": "满分人数",
        "top_test": "最常失败的测试",
        "heading": "{title}（章节：{chapter}）",
        "top_cell": "{test}（{kind}，{c}）", "short": "{label}（{score} / {possible}）",
        "case": "{test}【{kind}】：{error}", "item": "* {name}：{points}",
        "hardest_line": "失败最多的练习：{label}，{n} 份作业中有 {k} 份没有得满分",
        "top_line": "最常失败的测试：{test}（{kind}），{c} 份作业没有通过",
        "no_details": "没有测试详情（CSV 旁边没有 JSON 文件）",
        "all_full": "所有作业都得了满分。", "per_student": "每份作业",
        "submission": "作业", "failed": "没有通过的内容", "nothing": "无",
        "hidden": "隐藏测试", "public": "公开检查", "none": "-",
        "note": "说明：{text}",
    },
}


@dataclass
class ExerciseStats:
    label: str
    possible: float
    scores: list[float]
    failing_tests: Counter = field(default_factory=Counter)

    @property
    def mean(self) -> float:
        return sum(self.scores) / len(self.scores) if self.scores else 0.0

    @property
    def full(self) -> int:
        return sum(s >= self.possible - 1e-9 for s in self.scores)


@dataclass
class StudentResult:
    submission: str
    total: float
    possible: float
    # (exercise label, points, possible, [(test case, hidden, error)])
    short: list[tuple[str, float, float, list[tuple[str, bool, str]]]]
    # why something was not graded (a limit reached, a broken file, tampering), from the JSON
    notes: list[str] = field(default_factory=list)


@dataclass
class ClassReport:
    chapter: str
    exercises: list[ExerciseStats]
    students: list[StudentResult]
    hidden: dict[str, bool]  # test case name -> hidden
    has_details: bool

    def hardest(self) -> ExerciseStats | None:
        """The exercise with the most submissions short of full marks (then the lowest mean
        relative to its points); ``None`` when every submission got full marks."""
        short = [e for e in self.exercises if e.full < len(e.scores)]
        if not short:
            return None
        return max(short, key=lambda e: (len(e.scores) - e.full,
                                         -e.mean / e.possible if e.possible else 0))


def read_grades(csv_path: Path) -> tuple[list[dict], dict]:
    """The CSV's rows and the JSON details next to it (``{}`` when there are none)."""
    with open(csv_path, newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    details_file = csv_path.with_suffix(".json")
    details = (json.loads(details_file.read_text(encoding="utf-8"))
               if details_file.exists() else {})
    return rows, details


def _possible(labels: list[str], details: dict, lang: str) -> dict[str, float]:
    """Points each exercise is worth: from the JSON's test cases, else from the book."""
    tests = details.get("tests", {})
    if all(label in tests for label in labels):
        return {label: sum(c["points"] for c in tests[label]) for label in labels}
    worth: dict[str, float] = {}  # from the chapters, for a CSV without its JSON
    for chapter in exercises.graded_chapters(lang):
        for ex in exercises.graded_exercises(lang, chapter):
            worth[ex.label] = sum(exercises.test_points(ex))
    return {label: worth.get(label, 0.0) for label in labels}


def build(csv_path: Path, lang: str = "en") -> ClassReport:
    """The class report of a ``grade`` CSV (and its JSON, when present)."""
    rows, details = read_grades(csv_path)
    labels = [c for c in (rows[0].keys() if rows else []) if c not in FIXED_COLUMNS]
    possible = _possible(labels, details, lang)
    hidden = {c["name"]: c["hidden"] for cases in details.get("tests", {}).values()
              for c in cases}
    failures = details.get("failures", {})
    stats = {label: ExerciseStats(label, possible[label], []) for label in labels}
    students = []
    for row in rows:
        short = []
        for label in labels:
            score = float(row[label] or 0)
            stats[label].scores.append(score)
            if score < possible[label] - 1e-9:
                failed = failures.get(row["submission"], {}).get(label, {})
                stats[label].failing_tests.update(failed.keys())
                short.append((label, score, possible[label],
                              [(t, hidden.get(t, False), err) for t, err in failed.items()]))
        students.append(StudentResult(row["submission"], float(row["total"]),
                                      float(row["possible"]), short,
                                      list(details.get("notes", {}).get(row["submission"], []))))
    return ClassReport(details.get("chapter", ""), list(stats.values()), students, hidden,
                       bool(details))


def _top_test(e: ExerciseStats) -> tuple[str, int] | None:
    return e.failing_tests.most_common(1)[0] if e.failing_tests else None


def _kind(report: ClassReport, test: str, w: dict) -> str:
    return w["hidden"] if report.hidden.get(test) else w["public"]


def summary_lines(report: ClassReport, lang: str) -> list[str]:
    """The sentence about the most often failed exercise and its most frequent failing test."""
    w = WORDS[lang]
    e = report.hardest()
    if e is None:
        return [w["all_full"]]
    n = len(e.scores)
    lines = [w["hardest_line"].format(label=e.label, k=n - e.full, n=n)]
    top = _top_test(e)
    if top is not None:
        lines.append(w["top_line"].format(test=top[0], kind=_kind(report, top[0], w), c=top[1]))
    elif not report.has_details:
        lines.append(w["no_details"])
    return lines


def exercise_rows(report: ClassReport, lang: str) -> list[list[str]]:
    """Header and one row per exercise: label, points, mean, full marks, top failing test."""
    w = WORDS[lang]
    out = [[w["exercise"], w["points"], w["mean"], w["full"], w["top_test"]]]
    for e in report.exercises:
        top = _top_test(e)
        out.append([e.label, f"{e.possible:g}", f"{e.mean:.2f}", f"{e.full} / {len(e.scores)}",
                    w["top_cell"].format(test=top[0], kind=_kind(report, top[0], w), c=top[1])
                    if top else w["none"]])
    return out


def student_rows(report: ClassReport, lang: str) -> list[list[str]]:
    """Header and one row per submission: name, points, what failed (one item a line)."""
    w = WORDS[lang]
    out = [[w["submission"], w["points"], w["failed"]]]
    for s in report.students:
        items = [w["note"].format(text=n) for n in s.notes]
        for label, score, possible, tests in s.short:
            items.append(w["short"].format(label=label, score=f"{score:g}",
                                           possible=f"{possible:g}"))
            items += ["  " + w["case"].format(test=t, kind=w["hidden"] if h else w["public"],
                                              error=err.replace("\n", " | "))
                      for t, h, err in tests]
        out.append([s.submission, f"{s.total:g} / {s.possible:g}",
                    "\n".join(items) or w["nothing"]])
    return out


def render_text(report: ClassReport, lang: str = "en") -> str:
    """The report as plain text for the terminal."""
    w = WORDS[lang]
    head = (w["heading"].format(title=w["title"], chapter=report.chapter) if report.chapter
            else w["title"])
    lines = [head, f"{len(report.students)} {w['students']}", ""]
    lines += [_text_table(exercise_rows(report, lang)), ""]
    lines += summary_lines(report, lang) + ["", w["per_student"]]
    for name, points, failed in student_rows(report, lang)[1:]:
        lines.append(w["item"].format(name=name, points=points))
        lines += [f"    {ln}" for ln in failed.split("\n")]
    return "\n".join(lines) + "\n"


def _width(text: str) -> int:
    """Columns the text takes in a terminal (a Chinese character takes two)."""
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)


def _text_table(rows: list[list[str]]) -> str:
    widths = [max(_width(r[k]) for r in rows) for k in range(len(rows[0]))]
    return "\n".join("  ".join(c + " " * (wd - _width(c)) for c, wd in zip(r, widths)).rstrip()
                     for r in rows)


def _html_table(rows: list[list[str]]) -> str:
    head = "".join(f"<th>{html.escape(c)}</th>" for c in rows[0])
    body = "".join("<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in r) + "</tr>\n"
                   for r in rows[1:])
    return f"<table>\n<thead><tr>{head}</tr></thead>\n<tbody>\n{body}</tbody>\n</table>"


def render_html(report: ClassReport, lang: str = "en") -> str:
    """The report as a self-contained HTML page."""
    w = WORDS[lang]
    title = w["title"] + (f": {report.chapter}" if report.chapter else "")
    summary = "".join(f"<p>{html.escape(ln)}</p>" for ln in summary_lines(report, lang))
    style = ("body{font-family:sans-serif;margin:2em}table{border-collapse:collapse;"
             "margin:1em 0}td,th{border:1px solid #999;padding:.3em .6em;text-align:left;"
             "vertical-align:top;white-space:pre-wrap}")
    return (f'<!DOCTYPE html>\n<html lang="{lang}">\n<head><meta charset="utf-8">'
            f"<title>{html.escape(title)}</title><style>{style}</style></head>\n<body>\n"
            f"<h1>{html.escape(title)}</h1>\n"
            f"<p>{len(report.students)} {html.escape(w['students'])}</p>\n"
            f"{_html_table(exercise_rows(report, lang))}\n{summary}\n"
            f"<h2>{html.escape(w['per_student'])}</h2>\n"
            f"{_html_table(student_rows(report, lang))}\n</body>\n</html>\n")


def report(csv_path: Path, lang: str = "en", html_path: Path | None = None) -> str:
    """Build the report of ``csv_path``, write it as HTML to ``html_path`` if given, and return
    it as text."""
    rep = build(csv_path, lang)
    if html_path is not None:
        html_path.write_text(render_html(rep, lang), encoding="utf-8")
    return render_text(rep, lang)


def write_grades(rows: list[dict], details: dict, csv_path: Path) -> None:
    """The points of each submission as CSV (``submission``, ``total``, ``possible``, then one
    column per exercise) and, next to it (:func:`details_path`), ``details`` as JSON: what
    ``grade --csv`` and the classroom dry run write, and ``report`` reads."""
    fields = list(dict.fromkeys(k for row in rows for k in row))
    csv_path.parent.mkdir(parents=True, exist_ok=True)
    with open(csv_path, "w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, fieldnames=fields)
        w.writeheader()
        w.writerows(rows)
    details_path(csv_path).write_text(json.dumps(details, ensure_ascii=False, indent=1),
                                      encoding="utf-8")


def details_path(csv_path: Path) -> Path:
    """Where ``grade`` writes the failing tests next to its CSV: ``grades.csv`` ->
    ``grades.json``."""
    return csv_path.with_suffix(".json")
