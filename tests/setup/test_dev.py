"""tools/setup/dev.py, behind `make book` and `make test`: set-up that explains itself.

Nothing here touches the network: unreachable indexes are closed local ports, the npm registry is
a local HTTP server.
"""
from __future__ import annotations

import base64
import hashlib
import http.server
import io
import subprocess
import sys
import tarfile
import threading
import time
from pathlib import Path

import pytest

from tools.setup import dev

ROOT = Path(__file__).resolve().parents[2]

def test_old_python_gets_a_message(monkeypatch):
    monkeypatch.setattr(dev.sys, "version_info", (3, 8, 10, "final", 0))
    with pytest.raises(dev.SetupError, match=r"Python 3\.10 or newer is needed") as info:
        dev.check_python()
    assert "PYTHON=python3.12" in str(info.value)


def test_dev_script_parses_on_old_interpreters():
    # the message above must be reachable: no syntax newer than Python 3.6 in the file
    import ast

    dev = ROOT / "tools" / "setup" / "dev.py"
    ast.parse(dev.read_text(encoding="utf-8"), feature_version=(3, 6))


def test_unknown_command_prints_usage():
    proc = subprocess.run([sys.executable, "-m", "tools.setup.dev", "nonsense"],
                          capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode == 2 and "usage:" in proc.stdout and "book" in proc.stdout


def test_broken_venv_is_recreated(tmp_path, monkeypatch):
    venv = tmp_path / ".venv"
    (venv / "bin").mkdir(parents=True)
    (venv / "bin" / "python").symlink_to(tmp_path / "gone" / "python3")  # a dangling interpreter
    monkeypatch.setattr(dev, "VENV", str(venv))
    assert not dev.venv_works()
    dev.create_venv()
    assert dev.venv_works()


def test_unreachable_torch_index_fails_fast_and_says_what_to_set(monkeypatch):
    monkeypatch.delenv("TORCH_SPEC", raising=False)
    monkeypatch.setattr(dev, "CPU_INDEX", "http://127.0.0.1:9/whl/cpu")  # nothing listens there
    monkeypatch.setattr(dev, "nvidia_gpu", lambda: False)
    monkeypatch.setattr(dev.sys, "platform", "linux")
    start = time.monotonic()
    with pytest.raises(dev.SetupError) as info:
        dev.torch_args({"torch": "2.13.0"})
    assert time.monotonic() - start < 15
    message = str(info.value)
    assert "cannot be reached" in message and "TORCH_SPEC='torch==2.13.0'" in message


def test_torch_spec_is_used_as_given(monkeypatch):
    monkeypatch.setenv("TORCH_SPEC", "torch==2.13.0 --index-url https://mirror.example/cpu")
    args, what = dev.torch_args({})
    assert args == ["torch==2.13.0", "--index-url", "https://mirror.example/cpu"]
    assert "TORCH_SPEC" in what


def test_the_lock_pins_every_requirement():
    locked = dev.locked_versions()
    assert dev.lock_python() is not None, "requirements-lock.txt has no '# python:' header"
    import re

    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    ranges = project["dependencies"] + [r for extra in project["optional-dependencies"].values()
                                        for r in extra]
    assert len(ranges) > 30  # the library and its four extras
    for requirement in ranges:
        name = re.split(r"[<>=!~\[; ]", requirement, maxsplit=1)[0].lower()
        assert name in locked, f"{name} is in pyproject.toml but not in the lock"


def test_requirements_txt_installs_every_extra_and_writes_no_range():
    text = (ROOT / "requirements.txt").read_text(encoding="utf-8")
    lines = [ln.split("#")[0].strip() for ln in text.splitlines() if ln.split("#")[0].strip()]
    import tomllib

    extras = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"][
        "optional-dependencies"]
    assert lines == ["-e .[" + ",".join(extras) + "]"]


def test_lock_is_skipped_for_another_python_or_on_request(monkeypatch, capsys):
    monkeypatch.setattr(dev, "lock_python", lambda: "3.0")
    assert dev.use_lock() is False
    assert "tested with Python 3.0" in capsys.readouterr().out
    monkeypatch.setattr(dev, "lock_python", lambda: "%d.%d" % sys.version_info[:2])
    assert dev.use_lock() is True
    monkeypatch.setenv("D2LMINI_LATEST", "1")
    assert dev.use_lock() is False


@pytest.fixture
def npm_registry(monkeypatch):
    """A local npm registry serving one package tarball."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        body = b'{"name": "demo", "version": "1.0.0"}'
        info = tarfile.TarInfo("package/package.json")
        info.size = len(body)
        tar.addfile(info, io.BytesIO(body))
    tgz = buf.getvalue()

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):  # the name http.server expects
            if self.path == "/demo/-/demo-1.0.0.tgz":
                self.send_response(200)
                self.send_header("Content-Length", str(len(tgz)))
                self.end_headers()
                self.wfile.write(tgz)
            else:
                self.send_error(404)

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    monkeypatch.setenv("NPM_CONFIG_REGISTRY", f"http://127.0.0.1:{server.server_address[1]}")
    yield "sha512-" + base64.b64encode(hashlib.sha512(tgz).digest()).decode()
    server.shutdown()


def test_npm_packages_fetched_without_npm_and_checked(npm_registry, tmp_path, monkeypatch):
    monkeypatch.setattr(dev, "ROOT", str(tmp_path))
    dev.fetch_npm_package("demo", "1.0.0", npm_registry)
    assert (tmp_path / "node_modules" / "demo" / "package.json").is_file()
    with pytest.raises(dev.SetupError, match="does not match package-lock.json"):
        dev.fetch_npm_package("demo", "1.0.0", "sha512-" + "A" * 86 + "==")


def test_new_commands_are_listed():
    proc = subprocess.run([sys.executable, "-m", "tools.setup.dev", "--help"],
                          capture_output=True, text=True, cwd=ROOT)
    for command in ("check", "doctor", "system"):
        assert f"  {command} " in proc.stdout


def test_ruff_findings_are_counted():
    assert dev.count_ruff_findings("x.py:1:1: F401 ...\nFound 57 errors.\n[*] 1 fixable") == 57
    assert dev.count_ruff_findings("All checks passed!") == 0


def test_doctor_says_what_a_bug_report_needs():
    proc = subprocess.run([sys.executable, "-m", "tools.setup.dev", "doctor"],
                          capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    for needed in ("python:", "cores usable:", "system package chromium", "xelatex:",
                   "chromium:", ".venv:"):
        assert needed in out, needed
    if dev.venv_works():  # the part that runs in .venv
        for needed in ("torch", "device:", "CJK font for Chinese plot labels:", "data fra-eng",
                       "data cmn-eng", "data text8", "download cache:", "trained-weight cache:",
                       "executed-notebook cache:"):
            assert needed in out, needed


def test_a_lock_this_python_cannot_install_falls_back_once(tmp_path, monkeypatch, capsys):
    # Debian 12's Python 3.11.2 matches the lock's "3.11", but a locked version may need 3.11.5
    monkeypatch.setattr(dev, "VENV", str(tmp_path))
    monkeypatch.setattr(dev, "lock_python", lambda: "%d.%d" % sys.version_info[:2])
    calls = []

    def fake_pip(args, what):
        calls.append(list(args))
        if "-c" in args:
            raise dev.SetupError("pip could not install the book's requirements:\n"
                                 "ERROR: Cannot install -r requirements.txt (line 39)")

    monkeypatch.setattr(dev, "pip", fake_pip)
    assert dev.use_lock() is True
    assert dev.install_requirements(True) is False
    assert calls == [["-r", "requirements.txt", "-c", dev.LOCK], ["-r", "requirements.txt"]]
    out = capsys.readouterr().out
    assert "could not install requirements-lock.txt's versions" in out and "line 39" in out
    # remembered: the next run goes straight to the ranges, and says why
    assert dev.use_lock() is False
    assert "before" in capsys.readouterr().out
    calls.clear()
    assert dev.install_requirements(False) is False and calls == [["-r", "requirements.txt"]]
