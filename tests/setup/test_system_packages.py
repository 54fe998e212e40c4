"""The system packages of the tests (tools/setup/dev.py): one list, one apt-get install on a bare
machine, a check afterwards that names exactly what is still missing, one message without root.

The machine is simulated: no program on PATH, fc-list and kpsewhich absent until the packages
that bring them are "installed" by the fake apt-get, which records its calls."""
from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tools.setup import dev

ROOT = Path(__file__).resolve().parents[2]

# what each package brings, beyond the file its own check looks for
PROVIDES = {"fontconfig": {"cmd": {"fc-list", "fc-cache"}},
            "texlive-xetex": {"cmd": {"xelatex", "kpsewhich"}}}


class FakeMachine:
    """A Debian machine with nothing installed; apt-get installs what SYSTEM_PACKAGES checks
    (except the files listed in ``broken``, to simulate a package that does not bring them)."""

    def __init__(self, broken=()):
        self.installed: set[str] = set()
        self.calls: list[list[str]] = []
        self.broken = set(broken)

    def _have(self, kind: str) -> set[str]:
        found = set()
        for pkg, k, what, _ in dev.SYSTEM_PACKAGES:
            if pkg in self.installed and k == kind and what not in self.broken:
                found.add(what)
        for pkg in self.installed:
            found |= PROVIDES.get(pkg, {}).get(kind, set())
        return found

    def which(self, name):
        return f"/usr/bin/{name}" if name in self._have("cmd") or (
            name == "apt-get") else None

    def run(self, cmd, **kwargs):
        name = cmd[0].rsplit("/", 1)[-1]
        self.calls.append(list(cmd))
        out = ""
        if name == "apt-get" and cmd[1] == "install":
            self.installed |= {c for c in cmd[2:] if not c.startswith("-")}
        elif name == "fc-list":
            out = "".join(f"/usr/share/fonts/x/{f}\n" for f in self._have("font"))
        elif name == "kpsewhich":
            out = "".join(f"/usr/share/texmf/{f}\n" for f in cmd[1:] if f in self._have("tex"))
        return subprocess.CompletedProcess(cmd, 0, out, "")

    def installs(self):
        return [c for c in self.calls if c[0] == "apt-get" and c[1] == "install"]


@pytest.fixture
def machine(monkeypatch):
    def make(root=True, broken=()):
        fake = FakeMachine(broken)
        monkeypatch.setattr(dev.shutil, "which", fake.which)
        monkeypatch.setattr(dev.subprocess, "run", fake.run)
        monkeypatch.setattr(dev.os, "geteuid", lambda: 0 if root else 1000)
        return fake
    return make


def test_a_bare_machine_misses_every_package(machine):
    machine()
    assert [pkg for pkg, _ in dev.missing_system_packages()] == dev.apt_packages()


def test_one_install_call_holds_every_package_a_later_check_asks_for(machine):
    fake = machine()
    dev.ensure_system_packages()  # no error: nothing is missing afterwards
    installs = fake.installs()
    assert len(installs) == 1
    assert set(installs[0]) >= set(dev.apt_packages())
    assert dev.missing_system_packages() == []
    dev.ensure_system_packages()
    assert len(fake.installs()) == 1  # a second run installs nothing


def test_what_is_still_missing_after_the_install_is_named_exactly(machine):
    machine(broken={"pzdr.tfm"})  # texlive-fonts-recommended installed, yet no ZapfDingbats
    with pytest.raises(dev.SetupError) as info:
        dev.ensure_system_packages()
    message = str(info.value)
    assert "texlive-fonts-recommended" in message.split("still fail:")[1]
    still = message.split("still fail:")[1]
    assert "texlive-xetex" not in still and "chromium" not in still


def test_without_root_one_message_lists_everything(machine):
    fake = machine(root=False)
    with pytest.raises(dev.SetupError) as info:
        dev.ensure_system_packages()
    assert fake.installs() == []
    install_line = next(line for line in str(info.value).splitlines() if "apt-get install" in line)
    assert install_line.split("--no-install-recommends ")[1].split() == dev.apt_packages()


def test_the_workflow_installs_the_same_list():
    workflow = (ROOT / ".github" / "workflows" / "book.yml").read_text(encoding="utf-8")
    assert "-m tools.setup.dev system" in workflow
    assert "apt-get install" not in workflow  # one list: tools/setup/dev.py's


def test_the_pdf_build_does_not_replay_a_failed_latex_run(tmp_path, monkeypatch):
    """latexmk replays a failed run ("Nothing to do ... gave an error") while its state is in
    the LaTeX folder: after a failure the next build starts from a clean folder."""
    from tools.build import build_pdf

    monkeypatch.setattr(build_pdf, "pdf_config",
                        lambda *a, **k: {"nb_execution_cache_path": str(tmp_path / "jc")})
    monkeypatch.setattr(build_pdf.build_book, "write_conf", lambda *a, **k: None)
    monkeypatch.setattr(build_pdf, "cache_records", lambda path: {})
    monkeypatch.setattr(build_pdf.shutil, "which", lambda name: f"/usr/bin/{name}")
    machine = {"fixed": False}

    def fake_run(cmd, cwd, env, logfile, quiet):
        if "sphinx" in cmd:
            Path(next(a for a in cmd if "/latex/" in a)).mkdir(parents=True, exist_ok=True)
            return 0
        state = Path(cwd) / "book.fdb_latexmk"
        if state.exists() or not machine["fixed"]:  # latexmk remembers the error
            state.write_text("xelatex: gave an error")
            return 12
        (Path(cwd) / cmd[-1].replace(".tex", ".pdf")).write_bytes(b"%PDF")
        return 0

    monkeypatch.setattr(build_pdf, "_run", fake_run)
    with pytest.raises(build_pdf.PdfError, match="xelatex failed"):
        build_pdf.build_one("en", "full", assets=tmp_path, build=tmp_path)
    machine["fixed"] = True  # the reader installs the missing TeX package and runs again
    result = build_pdf.build_one("en", "full", assets=tmp_path, build=tmp_path)
    assert result["name"] == build_pdf.stem("en", "full")
    assert build_pdf.pdf_path("en", "full", tmp_path).read_bytes() == b"%PDF"
    assert not list((tmp_path / "latex" / "en").glob(".failed-*"))
