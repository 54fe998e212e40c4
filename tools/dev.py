#!/usr/bin/env python3
"""One entry point for everything a reader or a maintainer runs: set-up included.

    python3 tools/dev.py book [build_book.py options]   # = make book
    python3 tools/dev.py test [pytest options]           # = make test
    python3 tools/dev.py pdf | assign | export | bench | lock | setup | clean

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
import urllib.request

MIN_PYTHON = (3, 10)
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
VENV = os.path.join(ROOT, ".venv")
LOCK = os.path.join(ROOT, "requirements-lock.txt")
STAMP_NAME = ".d2lmini-setup"
CPU_INDEX = "https://download.pytorch.org/whl/cpu"
PIP_NET = ["--timeout", "20", "--retries", "1", "--progress-bar", "off",
           "--disable-pip-version-check"]
# Debian packages that the tests (browser, PDF) and the figures need, and what each is for
SYSTEM_NEEDS = [
    ("chromium", "chromium", "the browser tests (headless Chromium)"),
    ("fc-list", "fontconfig", "finding fonts"),
    ("xelatex", "texlive-xetex", "the PDF build"),
    ("latexmk", "latexmk", "the PDF build"),
    ("pdftotext", "poppler-utils", "the PDF tests"),
]
CJK_FONT = ("Noto Sans CJK", "fonts-noto-cjk", "Chinese text in plots and in the PDF")
# TeX files the PDF build needs, and the Debian package that brings each
TEX_FILES = [
    ("xeCJK.sty", "texlive-lang-chinese", "the Chinese PDF"),
    ("fontspec.sty", "texlive-latex-recommended", "the PDF's fonts"),
    ("fncychap.sty", "texlive-latex-extra", "Sphinx's LaTeX layout"),
    ("texgyretermes-regular.otf", "fonts-texgyre", "the PDF's Latin fonts"),
]


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
            "with it, e.g.  make book PYTHON=python3.12  or  python3.12 tools/dev.py book".format(
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
    except Exception:  # noqa: BLE001 - any failure means "not reachable"
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
    return True


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
            "(e.g. https://registry.npmmirror.com), then run again.".format(e))


# ------------------------------------------------------------------------------ system packages
def missing_system_packages():
    missing = [(pkg, why) for cmd, pkg, why in SYSTEM_NEEDS if not shutil.which(cmd)]
    fonts = ""
    if shutil.which("fc-list"):
        fonts = subprocess.run(["fc-list"], capture_output=True, text=True).stdout
    if CJK_FONT[0] not in fonts:
        missing.append(CJK_FONT[1:])
    kpse = shutil.which("kpsewhich")
    if shutil.which("xelatex") and kpse:
        for name, pkg, why in TEX_FILES:
            if not subprocess.run([kpse, name], capture_output=True, text=True).stdout.strip():
                missing.append((pkg, why))
    if not any(os.path.isdir(d) for d in ("/usr/share/fonts/truetype/dejavu",
                                           "/usr/share/fonts/dejavu")) and sys.platform != "darwin":
        missing.append(("fonts-dejavu-core", "code in the PDF"))
    return missing


def ensure_system_packages():
    """The tests need a browser, fonts and TeX. Installed with apt-get when this runs as root on
    Debian/Ubuntu (CI, containers); otherwise the message lists what to install."""
    missing = missing_system_packages()
    if not missing:
        return
    packages = sorted({pkg for pkg, _ in missing})
    root = hasattr(os, "geteuid") and os.geteuid() == 0
    if root and shutil.which("apt-get"):
        say("installing system packages: " + " ".join(packages))
        env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
        for cmd in (["apt-get", "update", "-q"],
                    ["apt-get", "install", "-y", "-q", "--no-install-recommends"] + packages):
            if subprocess.run(cmd, env=env).returncode != 0:
                raise SetupError("apt-get failed: " + " ".join(cmd))
        if not missing_system_packages():
            return
    lines = ["  {:22} for {}".format(pkg, why) for pkg, why in missing]
    raise SetupError(
        "The tests need system packages that are missing:\n{}\nOn Debian/Ubuntu: sudo apt-get "
        "install {}\n(`make book` does not need them.)".format("\n".join(lines), " ".join(packages)))


# ------------------------------------------------------------------------------ set-up
def fingerprint(lock):
    h = hashlib.sha256()
    for name in ("requirements.txt", "pyproject.toml") + (("requirements-lock.txt",) if lock else ()):
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
        constraints = ["-c", LOCK] if lock else []
        pip(["-r", "requirements.txt"] + constraints,
            "the book's requirements" + (" (tested versions: requirements-lock.txt)" if lock
                                         else " (newest versions the ranges allow)"))
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


COMMANDS = {
    "setup": "create or repair .venv and install everything (every command does this first)",
    "book": "build the book, both editions, every chapter executed (tools/build_book.py)",
    "test": "run the tests (pytest), including the book built offline, browser and PDF",
    "pdf": "build the PDF of each edition (tools/build_pdf.py)",
    "assign": "student notebooks and autograder files per chapter (tools/assign.py)",
    "export": "export the chapters as notebooks (tools/export_notebooks.py)",
    "bench": "run the benchmarks (bench/run.py; not part of the tests)",
    "lock": "write requirements-lock.txt from .venv (after `make test` passed)",
    "clean": "remove _build (the executed-notebook cache too)",
}


def usage():
    return "usage: python3 tools/dev.py COMMAND [ARGS...]\n\n" + "\n".join(
        "  {:8} {}".format(k, v) for k, v in COMMANDS.items())


def main(argv):
    if not argv or argv[0] in ("-h", "--help", "help") or argv[0] not in COMMANDS:
        print(usage())
        return 0 if argv and argv[0] in ("-h", "--help", "help") else 2
    command, args = argv[0], argv[1:]
    try:
        if command == "clean":
            shutil.rmtree(os.path.join(ROOT, "_build"), ignore_errors=True)
            return 0
        if command == "lock":  # records what is installed: no set-up first
            if not venv_works():
                raise SetupError("no working .venv to record: run `make test` first")
            write_lock()
            return 0
        setup()
        if command == "setup":
            return 0
        if command in ("test", "pdf"):
            ensure_system_packages()
        if command == "bench":
            pip(["--no-deps", "-r", "bench/requirements.txt"], "the benchmark's reference (d2l)")
        script = {"book": ["tools/build_book.py"], "test": ["-m", "pytest"],
                  "pdf": ["tools/build_pdf.py"], "assign": ["tools/assign.py"],
                  "export": ["tools/export_notebooks.py"], "bench": ["bench/run.py"]}[command]
        return run_in_venv(script + args)
    except SetupError as e:
        print("\n[dev] " + str(e).replace("\n", "\n[dev] "), file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
