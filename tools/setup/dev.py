#!/usr/bin/env python3
"""One entry point for everything a reader or a maintainer runs: set-up included.

    python3 -m tools.setup.dev book [build_book.py options]   # = make book
    python3 -m tools.setup.dev test [pytest options]           # = make test
    python3 -m tools.setup.dev pdf | assign | export | bench | lock | setup | clean
    python3 -m tools.setup.dev gpu-pack | gpu-rehearse       # the GPU job (bench/README.md)

Every command first makes sure that ``.venv`` exists and holds what the book needs (created on
first use; repaired when it is broken; updated when requirements change), then runs in it. No
other set-up step is typed first. The Makefile is a thin wrapper around this script, so that
Windows users, who seldom have ``make``, can run the script directly.

Environment:
  TORCH_SPEC      pip arguments that install PyTorch, used as given (e.g. ``torch==2.13.0``,
                  or ``torch --index-url https://download.pytorch.org/whl/cu124``). Default: the
                  locked version, the CPU build unless an NVIDIA GPU is visible.
  PIP_INDEX_URL   a PyPI mirror (pip reads it itself), e.g. https://pypi.tuna.tsinghua.edu.cn/simple
  NPM_CONFIG_REGISTRY  an npm registry mirror for MathJax (used without npm too)
  D2LMINI_LATEST=1     install the newest versions the ranges of requirements.txt allow instead of
                  the tested versions of requirements-lock.txt (what the weekly CI job does)
  PYTHON          the interpreter that creates .venv (default: the one running this script)
  D2LMINI_VENV    the environment folder instead of .venv (one per Python, e.g. ~/.venvs/book-3.12)
  OMP_WAIT_POLICY PASSIVE unless set: OpenMP threads sleep while they wait (a busy machine)

This file is deliberately written for old interpreters too (no syntax newer than Python 3.6),
so that an old Python gets a clear message instead of a SyntaxError.
"""
import base64
import hashlib
import io
import json
import os
import platform
import shlex
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
import urllib.request

from tools import ci_times

MIN_PYTHON = (3, 10)
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# D2LMINI_VENV: another environment folder, e.g. one per Python
# (D2LMINI_VENV=$HOME/.venvs/book-3.12 make check PYTHON=python3.12)
VENV = os.path.abspath(os.environ.get("D2LMINI_VENV") or os.path.join(ROOT, ".venv"))
LOCK = os.path.join(ROOT, "requirements-lock.txt")
STAMP_NAME = ".d2lmini-setup"
LOCK_REFUSED_NAME = ".d2lmini-lock-refused"  # this Python could not install the lock
CPU_INDEX = "https://download.pytorch.org/whl/cpu"
PIP_NET = ["--timeout", "20", "--retries", "1", "--progress-bar", "off",
           "--disable-pip-version-check"]
# The Debian packages that the tests (browser, PDF) need: ONE list, installed in one apt-get call.
# Each entry: (package, kind, what is looked for, what it is for). kind "cmd": a program on PATH;
# "tex": a file kpsewhich finds (without kpsewhich: missing); "font": a font file fontconfig
# lists (without fc-list: missing). On a bare machine every check fails, so the first install
# holds every package that a later check could ask for.
SYSTEM_PACKAGES = [
    ("chromium", "cmd", "chromium", "the browser tests and the PDF's figures (headless)"),
    ("fontconfig", "cmd", "fc-list", "finding fonts (xelatex, the checks here)"),
    ("fonts-noto-cjk", "font", "NotoSansCJK-Regular.ttc", "Chinese text in the PDF"),
    ("fonts-noto-cjk", "font", "NotoSerifCJK-Regular.ttc", "the zh PDF's body text"),
    ("fonts-dejavu-core", "font", "DejaVuSansMono.ttf", "code in the PDF"),
    ("texlive-xetex", "cmd", "xelatex", "the PDF build"),
    ("latexmk", "cmd", "latexmk", "the PDF build"),
    ("poppler-utils", "cmd", "pdftotext", "the PDF tests (pdftotext, pdfinfo, pdffonts)"),
    ("texlive-lang-chinese", "tex", "xeCJK.sty", "the Chinese PDF"),
    ("texlive-latex-recommended", "tex", "fontspec.sty", "the PDF's fonts"),
    ("texlive-latex-extra", "tex", "fncychap.sty", "Sphinx's LaTeX layout"),
    ("texlive-latex-extra", "tex", "newunicodechar.sty", "the PDF's symbols"),
    ("texlive-fonts-recommended", "tex", "pzdr.tfm", "ZapfDingbats (pzdr), which xelatex loads"),
    ("fonts-texgyre", "tex", "texgyretermes-regular.otf", "the PDF's Latin fonts"),
]


def apt_packages():
    """Every Debian package of SYSTEM_PACKAGES, once each, in the list's order."""
    seen = []
    for pkg, _, _, _ in SYSTEM_PACKAGES:
        if pkg not in seen:
            seen.append(pkg)
    return seen


class SetupError(Exception):
    """Something a reader must fix; the message says what and how."""


def say(msg):
    print("[dev] " + msg, flush=True)


# ------------------------------------------------------------------------------ the interpreter
def check_python():
    if sys.version_info < MIN_PYTHON:
        raise SetupError(
            "Python {}.{} or newer is needed; this is Python {} ({}).\n"
            "Install a newer Python (python.org, your package manager, or pyenv) and run again "
            "with it, e.g.  make book PYTHON=python3.12  or  "
            "python3.12 -m tools.setup.dev book".format(
                MIN_PYTHON[0], MIN_PYTHON[1], platform.python_version(), sys.executable))


def venv_python():
    if os.name == "nt":
        return os.path.join(VENV, "Scripts", "python.exe")
    return os.path.join(VENV, "bin", "python")


def venv_works():
    py = venv_python()
    if not os.path.exists(py):
        return False
    try:
        out = subprocess.run([py, "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
                             capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return False
    if out.returncode != 0:
        return False
    major, minor = (int(x) for x in out.stdout.strip().split("."))
    return (major, minor) >= MIN_PYTHON


def create_venv():
    python = os.environ.get("PYTHON") or sys.executable
    if os.path.isdir(VENV):
        say(".venv exists but does not work (its Python is missing, broken or too old): "
            "recreating it")
        shutil.rmtree(VENV)
    say("creating .venv with " + python)
    proc = subprocess.run([python, "-m", "venv", VENV], capture_output=True, text=True)
    if proc.returncode != 0:
        shutil.rmtree(VENV, ignore_errors=True)
        hint = ""
        if "ensurepip" in proc.stdout + proc.stderr:
            hint = ("\nThis Python has no venv module: on Debian/Ubuntu install it with "
                    "`sudo apt-get install python3-venv` (or python3.X-venv).")
        raise SetupError("could not create .venv:\n" + (proc.stderr or proc.stdout).strip() + hint)


# ------------------------------------------------------------------------------ pip
def pip(args, what):
    cmd = [venv_python(), "-m", "pip", "install", "-q"] + PIP_NET + list(args)
    say("installing " + what)
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    if proc.returncode != 0:
        tail = "\n".join((proc.stdout + proc.stderr).strip().splitlines()[-15:])
        raise SetupError(
            "pip could not install {}:\n{}\n\nIf the package index is unreachable, set "
            "PIP_INDEX_URL to a mirror (e.g. https://pypi.tuna.tsinghua.edu.cn/simple); for "
            "PyTorch, TORCH_SPEC names what to install (see README.md, 'Set-up').".format(
                what, tail))


def reachable(url, timeout=10):
    try:
        req = urllib.request.Request(url, headers={"User-Agent": "d2lmini-dev"})
        with urllib.request.urlopen(req, timeout=timeout):
            return True
    except Exception:
        return False


def nvidia_gpu():
    if shutil.which("nvidia-smi"):
        try:
            out = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True, timeout=20)
            return out.returncode == 0 and "GPU" in out.stdout
        except (OSError, subprocess.TimeoutExpired):
            return False
    return os.path.exists("/proc/driver/nvidia/version")


def locked_versions():
    versions = {}
    if os.path.exists(LOCK):
        for line in open(LOCK, encoding="utf-8"):
            line = line.split("#")[0].strip()
            if "==" in line:
                name, version = line.split("==", 1)
                versions[name.strip().lower()] = version.strip()
    return versions


def lock_python():
    """The Python 'major.minor' the lock was made with (its header says), or None."""
    if not os.path.exists(LOCK):
        return None
    for line in open(LOCK, encoding="utf-8"):
        if line.startswith("# python:"):
            return line.split(":", 1)[1].strip()
    return None


def lock_refused_key():
    """What a refused lock is remembered by: this Python's full version and the lock's bytes."""
    with open(LOCK, "rb") as f:
        return "{} {}".format(platform.python_version(), hashlib.sha256(f.read()).hexdigest())


def use_lock():
    if os.environ.get("D2LMINI_LATEST", "") in ("1", "true", "yes"):
        return False
    made_with = lock_python()
    here = "%d.%d" % sys.version_info[:2]
    if made_with is None:
        return False
    if made_with != here:
        say("requirements-lock.txt was tested with Python {} and this is {}: installing the "
            "newest versions that requirements.txt allows instead".format(made_with, here))
        return False
    marker = os.path.join(VENV, LOCK_REFUSED_NAME)
    if os.path.exists(marker) and open(marker).read().strip() == lock_refused_key():
        say("pip could not install requirements-lock.txt's versions with Python {} before: "
            "installing the newest versions that requirements.txt allows instead".format(
                platform.python_version()))
        return False
    return True


def install_requirements(lock):
    """requirements.txt, with the lock's versions as constraints when ``lock``; returns whether
    the lock was used. A lock pip cannot satisfy with this Python (a locked version may need a
    later 3.x.y release than this one, e.g. Debian 12's 3.11.2) falls back to the newest versions
    the ranges allow, once, and is remembered in the environment."""
    latest = "the book's requirements (newest versions the ranges allow)"
    if not lock:
        pip(["-r", "requirements.txt"], latest)
        return False
    try:
        pip(["-r", "requirements.txt", "-c", LOCK],
            "the book's requirements (tested versions: requirements-lock.txt)")
        return True
    except SetupError as err:
        say("pip could not install requirements-lock.txt's versions with Python {}:\n  {}\n"
            "installing the newest versions that requirements.txt allows instead".format(
                platform.python_version(), "\n  ".join(str(err).splitlines()[1:6])))
    pip(["-r", "requirements.txt"], latest)
    with open(os.path.join(VENV, LOCK_REFUSED_NAME), "w") as f:
        f.write(lock_refused_key() + "\n")
    return False


def torch_args(locked):
    spec = os.environ.get("TORCH_SPEC", "").strip()
    if spec:
        return shlex.split(spec), "PyTorch (TORCH_SPEC: {})".format(spec)
    version = locked.get("torch")
    req = "torch==" + version if version else "torch"
    if sys.platform.startswith("linux") and not nvidia_gpu():
        if not reachable(CPU_INDEX + "/torch/"):
            raise SetupError(
                "PyTorch's CPU index {} cannot be reached.\nSet TORCH_SPEC to what your package "
                "index can serve, e.g.\n  TORCH_SPEC='{}' make book      (a local wheel, PyPI or "
                "the mirror in PIP_INDEX_URL; on Linux PyPI's build includes CUDA, about 2.5 GB)"
                "\n  TORCH_SPEC='{} --index-url <a mirror of the CPU index>' make book".format(
                    CPU_INDEX, req, req))
        return [req, "--index-url", CPU_INDEX], "PyTorch ({}, CPU build)".format(req)
    return [req], "PyTorch ({})".format(req)


# ------------------------------------------------------------------------------ MathJax (npm)
def npm_packages():
    with open(os.path.join(ROOT, "package-lock.json"), encoding="utf-8") as f:
        lock = json.load(f)
    for key, info in lock.get("packages", {}).items():
        if key.startswith("node_modules/") and "version" in info:
            yield key[len("node_modules/"):], info["version"], info.get("integrity", "")


def npm_assets_present():
    return all(os.path.isfile(os.path.join(ROOT, "node_modules", name, "package.json"))
               for name, _, _ in npm_packages())


def fetch_npm_package(name, version, integrity):
    """Download one package of package-lock.json from the npm registry and unpack it into
    node_modules, checking the lock's integrity hash: what `npm ci` does, without Node.js."""
    registry = os.environ.get("NPM_CONFIG_REGISTRY", "https://registry.npmjs.org").rstrip("/")
    url = "{}/{}/-/{}-{}.tgz".format(registry, name, name.split("/")[-1], version)
    with urllib.request.urlopen(url, timeout=30) as resp:
        data = resp.read()
    algo, _, expected = integrity.partition("-")
    if algo:
        digest = base64.b64encode(hashlib.new(algo, data).digest()).decode()
        if digest != expected:
            raise SetupError("{} from {} does not match package-lock.json's {} hash".format(
                name, url, algo))
    dest = os.path.join(ROOT, "node_modules", name)
    tmp = tempfile.mkdtemp(dir=ROOT, prefix=".npm-")
    try:
        with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
            if hasattr(tarfile, "data_filter"):  # Python >= 3.10.12: refuse unsafe members
                tar.extractall(tmp, filter="data")
            else:
                tar.extractall(tmp)
        shutil.rmtree(dest, ignore_errors=True)
        os.makedirs(os.path.dirname(dest), exist_ok=True)
        shutil.move(os.path.join(tmp, "package"), dest)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def ensure_npm_assets():
    if npm_assets_present():
        return
    npm = shutil.which("npm")
    if npm:
        say("installing MathJax and the other front-end assets with npm ci")
        proc = subprocess.run([npm, "ci", "--no-audit", "--no-fund", "--silent"], cwd=ROOT)
        if proc.returncode == 0 and npm_assets_present():
            return
        say("npm ci failed; fetching the packages of package-lock.json directly")
    else:
        say("npm is not installed: fetching MathJax (package-lock.json) from the npm registry "
            "directly")
    try:
        for name, version, integrity in npm_packages():
            fetch_npm_package(name, version, integrity)
    except (OSError, ValueError) as e:
        raise SetupError(
            "MathJax could not be installed ({}). Without it the book's formulas do not render. "
            "Install Node.js (npm) or set NPM_CONFIG_REGISTRY to a reachable npm registry mirror "
            "(e.g. https://registry.npmmirror.com), then run again.".format(e)) from None


# ------------------------------------------------------------------------------ system packages
def _font_files():
    """Base names of the font files fontconfig knows (None when fc-list is missing)."""
    fc = shutil.which("fc-list")
    if fc is None:
        return None
    out = subprocess.run([fc, "--format", "%{file}\\n"], capture_output=True, text=True).stdout
    return {os.path.basename(line.strip()) for line in out.splitlines() if line.strip()}


def _tex_files(names):
    """The names among ``names`` that kpsewhich finds (none without kpsewhich)."""
    kpse = shutil.which("kpsewhich")
    if kpse is None or not names:
        return set()
    out = subprocess.run([kpse] + list(names), capture_output=True, text=True).stdout
    return {os.path.basename(line.strip()) for line in out.splitlines() if line.strip()}


def missing_system_packages():
    """[(package, why)] of SYSTEM_PACKAGES whose check fails now, each package once."""
    fonts = _font_files()
    tex = _tex_files([what for _, kind, what, _ in SYSTEM_PACKAGES if kind == "tex"])
    missing = []
    for pkg, kind, what, why in SYSTEM_PACKAGES:
        if kind == "cmd":
            found = shutil.which(what) is not None
        elif kind == "font":
            found = fonts is not None and what in fonts
        else:
            found = what in tex
        if not found and pkg not in [p for p, _ in missing]:
            missing.append((pkg, why))
    return missing


def _describe(missing):
    return "\n".join("  {:26} for {}".format(pkg, why) for pkg, why in missing)


def ensure_system_packages():
    """The tests need a browser, fonts and TeX. When anything is missing and this runs as root
    with apt-get (CI, containers), every missing package is installed in one apt-get call and
    the machine is checked again; otherwise one message lists all that is missing."""
    missing = missing_system_packages()
    if not missing:
        return
    packages = [pkg for pkg, _ in missing]
    root = hasattr(os, "geteuid") and os.geteuid() == 0
    if not (root and shutil.which("apt-get")):
        raise SetupError(
            "The tests need system packages that are missing:\n{}\nOn Debian/Ubuntu: sudo "
            "apt-get install --no-install-recommends {}\n(`make book` does not need them; "
            "`make doctor` shows what is found.)".format(_describe(missing), " ".join(packages)))
    say("installing system packages: " + " ".join(packages))
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    for cmd in (["apt-get", "update", "-q"],
                ["apt-get", "install", "-y", "-q", "--no-install-recommends"] + packages):
        if subprocess.run(cmd, env=env).returncode != 0:
            raise SetupError("apt-get failed: " + " ".join(cmd))
    if shutil.which("fc-cache"):
        subprocess.run(["fc-cache"], capture_output=True)
    still = missing_system_packages()  # checked again: name what is missing now
    if still:
        raise SetupError(
            "apt-get installed {} but these checks still fail:\n{}\nInstall them by hand "
            "(their names may differ on this distribution), then run again.".format(
                " ".join(packages), _describe(still)))


# ------------------------------------------------------------------------------ set-up
def fingerprint(lock):
    h = hashlib.sha256()
    names = ("requirements.txt", "pyproject.toml") + (("requirements-lock.txt",) if lock else ())
    for name in names:
        with open(os.path.join(ROOT, name), "rb") as f:
            h.update(f.read())
    h.update(os.environ.get("TORCH_SPEC", "").encode())
    h.update(b"lock" if lock else b"latest")
    return h.hexdigest()


def setup():
    """Create or repair .venv and install what is missing; quick when nothing changed."""
    check_python()
    if not venv_works():
        create_venv()
    lock = use_lock()
    stamp = os.path.join(VENV, STAMP_NAME)
    want = fingerprint(lock)
    if not (os.path.exists(stamp) and open(stamp).read().strip() == want):
        locked = locked_versions() if lock else {}
        args, what = torch_args(locked)
        pip(args, what)
        if not install_requirements(lock):
            want = fingerprint(False)
        pip(["--no-deps", "-e", "."], "d2lmini (editable)")
        with open(stamp, "w") as f:
            f.write(want + "\n")
    ensure_npm_assets()


def run_in_venv(args, env=None):
    return subprocess.run([venv_python()] + args, cwd=ROOT, env=env).returncode


def write_lock():
    """requirements-lock.txt from the packages installed in .venv (run after the tests pass)."""
    out = subprocess.run([venv_python(), "-m", "pip", "freeze", "--exclude-editable"],
                         capture_output=True, text=True, check=True).stdout
    lines = []
    for line in out.splitlines():
        if not line or line.startswith("#") or " @ " in line or line.startswith("-e"):
            continue
        name, _, version = line.partition("==")
        lines.append("{}=={}".format(name, version.split("+")[0]))  # torch 2.x+cpu -> 2.x
    version = subprocess.run([venv_python(), "-c", "import sys; print('%d.%d' % "
                              "sys.version_info[:2])"], capture_output=True, text=True).stdout
    header = ("# The exact versions the tests passed with (`make lock` writes this file after "
              "`make test`).\n# `make` installs requirements.txt with these as constraints; "
              "D2LMINI_LATEST=1 ignores them.\n# python: {}\n# platform: {}\n".format(
                  version.strip(), platform.platform(terse=True)))
    with open(LOCK, "w", encoding="utf-8") as f:
        f.write(header + "\n".join(sorted(lines, key=str.lower)) + "\n")
    say("wrote requirements-lock.txt ({} packages)".format(len(lines)))


# ------------------------------------------------------------------------------ make check
# the contributor's tier: quick, no book build, no browser, no TeX (`make test` is everything)
CHECK_TESTS = ["tests/library", "tests/code", "tests/corpus", "tests/chapters", "tests/setup",
               "tests/authoring",
               "tests/scripts", "tests/gpu", "tests/build/test_cache_keys.py",
               "tests/build/test_busy_machine.py", "tests/build/test_book_sphinx_quick.py"]
CHECK_MARKERS = "not book and not browser and not pdf and not gpu_rehearsal"


def count_ruff_findings(output):
    """The number of findings in `ruff check` output ("Found N errors."; 0 when none)."""
    for line in output.splitlines():
        words = line.split()
        if len(words) >= 2 and words[0] == "Found" and words[1].isdigit():
            return int(words[1])
    return 0


def run_check(args, env):
    """ruff, then the library tests and the source checks; every part runs, and the command
    fails when any part failed."""
    t0 = time.time()
    proc = subprocess.run([venv_python(), "-m", "ruff", "check", "--output-format", "concise",
                           "."], cwd=ROOT, env=env, capture_output=True, text=True)
    output = (proc.stdout + proc.stderr).strip()
    findings = count_ruff_findings(output)
    lines = output.splitlines()
    print("\n".join(lines[:40] + (["... ({} more lines: `.venv/bin/ruff check .`)".format(
        len(lines) - 40)] if len(lines) > 40 else [])))
    ruff_ok = proc.returncode == 0
    tests_rc = run_in_venv(["-m", "pytest", "-q", "-m", CHECK_MARKERS] + CHECK_TESTS + list(args),
                           env=env)
    sync_rc = run_in_venv(["-m", "tools.checks.sync_save_blocks", "--check"], env=env)
    say("check: ruff {} ({} findings), tests {}, # @save blocks {}; {:.0f} s".format(
        "ok" if ruff_ok else "FAILED", findings, "ok" if tests_rc == 0 else "FAILED",
        "ok" if sync_rc == 0 else "FAILED", time.time() - t0))
    return 0 if ruff_ok and tests_rc == 0 and sync_rc == 0 else 1


# ------------------------------------------------------------------------------ make doctor
def _first_line(cmd):
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as e:
        return "not runnable ({})".format(e.__class__.__name__)
    text = (out.stdout or out.stderr).strip()
    return text.splitlines()[0] if text else "(no output)"


def doctor_system():
    """What the machine has: the lines of `make doctor` that need no .venv."""
    lines = ["python: {} ({})".format(platform.python_version(), sys.executable),
             "platform: {}".format(platform.platform()),
             "cores usable: {}".format(len(os.sched_getaffinity(0))
                                      if hasattr(os, "sched_getaffinity") else os.cpu_count())]
    for name in ("OMP_NUM_THREADS", "OMP_WAIT_POLICY", "MKL_NUM_THREADS", "TORCH_SPEC",
                 "PIP_INDEX_URL", "D2LMINI_LATEST"):
        if os.environ.get(name):
            lines.append("{}={}".format(name, os.environ[name]))
    missing = dict(missing_system_packages())
    for pkg in apt_packages():
        lines.append("system package {:26} {}".format(pkg, "MISSING" if pkg in missing
                                                       else "found"))
    for label, cmd in (("chromium", ["chromium", "--version"]),
                       ("xelatex", ["xelatex", "--version"]),
                       ("latexmk", ["latexmk", "-v"])):
        exe = shutil.which(cmd[0])
        lines.append("{}: {}".format(label, _first_line([exe] + cmd[1:]) if exe else
                                     "not found"))
    venv = "works" if venv_works() else "missing or broken (any make command recreates it)"
    stamp = os.path.join(VENV, STAMP_NAME)
    if venv_works() and os.path.exists(stamp):
        current = open(stamp).read().strip() == fingerprint(use_lock())
        venv += ", requirements {}".format("installed" if current else "changed since set-up")
    lines.append(".venv: " + venv)
    lines.append("requirements-lock.txt: Python {}".format(lock_python()))
    return lines


DOCTOR_VENV = r"""
import json, os, platform, sys
os.environ["D2LMINI_OFFLINE"] = "1"  # look, never download
import torch, matplotlib
import d2lmini as d2l
from d2lmini import book, datahub
from d2lmini.book import cache
print("venv python:", platform.python_version(), "| torch", torch.__version__,
      "| numpy", __import__("numpy").__version__, "| matplotlib", matplotlib.__version__)
cuda = torch.cuda.is_available()
print("device:", torch.cuda.get_device_name(0) if cuda else "CPU only", "| torch threads",
      torch.get_num_threads(), "| CUDA build" if torch.version.cuda else "| CPU build")
print("CJK font for Chinese plot labels:", book.find_cjk_font() or "NONE (the zh edition fails)")
online = os.environ.get("DEV_DOCTOR_USER_OFFLINE") != "1"
for name in d2l.DATA_HUB:
    src = d2l.resolve(name, offline=False)  # where it is; the offline corpus is not built
    what = src.kind
    if src.kind == "offline" and online:
        what = "download (when reachable), else the offline corpus"
    print("data {:8}: {}".format(name, what))
print("download cache:", d2l.get_cache_dir())
print("trained-weight cache:", cache.train_cache_dir(), "(the book build: _build/.train_cache)")
root = os.path.join("_build", ".jupyter_cache")
folders = sorted(os.listdir(root)) if os.path.isdir(root) else []
print("executed-notebook cache:", root, "({} folders)".format(len(folders)))
from tools.build import build_book
print("this checkout's cache key: code-" + build_book.cache_key(), "| d2lmini files",
      build_book.package_fingerprint())
"""


def doctor():
    """Print what a bug report needs; installs nothing."""
    for line in doctor_system():
        print(line)
    if not venv_works():
        return 0
    env = dict(os.environ)
    env["DEV_DOCTOR_USER_OFFLINE"] = os.environ.get("D2LMINI_OFFLINE", "")
    rc = subprocess.run([venv_python(), "-c", DOCTOR_VENV], cwd=ROOT, env=env).returncode
    if rc != 0:
        print("(the .venv part failed: its error is above)")
    return 0


def system_command():
    """`tools/setup/dev.py system`: install the tests' system packages (root) or say what to run."""
    ensure_system_packages()
    say("system packages: all found ({})".format(" ".join(apt_packages())))
    return 0


COMMANDS = {
    "setup": "create or repair .venv and install everything (every command does this first)",
    "book": "build the book, both editions, every chapter executed (tools/build/build_book.py)",
    "test": "run the tests (pytest), including the book built offline, browser and PDF",
    "pdf": "build the PDF of each edition (tools/build/build_pdf.py)",
    "assign": "student notebooks and autograder files per chapter (tools/classroom/assign.py)",
    "export": "export the chapters as notebooks (tools/classroom/export_notebooks.py)",
    "bench": "run the benchmarks (bench/run.py; not part of the tests)",
    "gpu-pack": "write .gpu/, what the GPU job needs that the GPU machine lacks "
                "(tools/gpu/pack.py)",
    "gpu-rehearse": "the GPU job on this CPU from the pack, tiny, in a fresh venv "
                    "(tools/gpu/rehearse.py)",
    "lock": "write requirements-lock.txt from .venv (after `make test` passed)",
    "clean": "remove _build (the executed-notebook cache too)",
    "check": "ruff, the library tests and the source checks (quick; no book build)",
    "doctor": "print what a bug report needs: Python, torch, device, fonts, TeX, Chromium, data",
    "chapter": "a new chapter in both editions with every part the checks ask of one "
               "(make chapter NAME=... TITLE=... TITLE_ZH=...; tools/authoring/new_chapter.py)",
    "system": "install the system packages the tests need (as root, apt-get) or list them",
}


def usage():
    return "usage: python3 -m tools.setup.dev COMMAND [ARGS...]\n\n" + "\n".join(
        "  {:12} {}".format(k, v) for k, v in COMMANDS.items())


def main(argv):
    if not argv or argv[0] in ("-h", "--help", "help") or argv[0] not in COMMANDS:
        print(usage())
        return 0 if argv and argv[0] in ("-h", "--help", "help") else 2
    command, args = argv[0], argv[1:]
    try:
        if command == "clean":
            shutil.rmtree(os.path.join(ROOT, "_build"), ignore_errors=True)
            return 0
        if command == "doctor":  # reports what is there: installs nothing
            return doctor()
        if command == "system":
            return system_command()
        if command == "lock":  # records what is installed: no set-up first
            if not venv_works():
                raise SetupError("no working .venv to record: run `make test` first")
            write_lock()
            return 0
        t0 = time.time()
        setup()
        if command == "setup":
            return 0
        if command in ("test", "pdf"):
            ensure_system_packages()
        ci_times.record(f"set-up (make {command})", t0, time.time())
        if command == "bench":
            pip(["--no-deps", "-r", "bench/requirements.txt"], "the benchmark's reference (d2l)")
        env = dict(os.environ)
        env.setdefault("OMP_WAIT_POLICY", "PASSIVE")  # no spinning threads on a busy machine
        if command == "check":
            return run_check(args, env)
        script = {"book": ["-m", "tools.build.build_book"], "test": ["-m", "pytest"],
                  "pdf": ["-m", "tools.build.build_pdf"],
                  "assign": ["-m", "tools.classroom.assign"],
                  "export": ["-m", "tools.classroom.export_notebooks"],
                  "chapter": ["-m", "tools.authoring.new_chapter"],
                  "bench": ["bench/run.py"], "gpu-pack": ["-m", "tools.gpu.pack"],
                  "gpu-rehearse": ["-m", "tools.gpu.rehearse"]}[command]
        return run_in_venv(script + args, env=env)
    except SetupError as e:
        print("\n[dev] " + str(e).replace("\n", "\n[dev] "), file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
