/* "Run in your browser" (tools/build/book_sphinx/browser.py): the chapter's code cells that need only
 * NumPy, SciPy and Matplotlib run in the page, in Pyodide (Python compiled to WebAssembly).
 * Pyodide's core comes from the site (_static/pyodide/); the packages a cell imports come from
 * Pyodide's CDN, so they need a network. The reader's code only ever reaches the page as text
 * (textContent, img src of a PNG made by Matplotlib).
 */
(function () {
  "use strict";
  const script = document.currentScript;
  const STATIC = script ? script.src.replace(/[^/]*$/, "") : "_static/";
  const ZH = (document.documentElement.lang || "").toLowerCase().startsWith("zh");
  const T = ZH ? {
    banner: (n, m) => `在浏览器中运行：本章 ${m} 个代码单元中有 ${n} 个只用 NumPy、SciPy 和 Matplotlib，` +
      "现在可以在本页修改并运行（Pyodide，把 Python 编译成 WebAssembly）。其余单元需要 PyTorch、gensim 或本书的辅助包 d2lmini，" +
      "请在 Colab 或 Binder 中运行。",
    starting: "正在启动 Python（Pyodide）……",
    ready: v => `Python ${v} 已就绪。点击某个单元的“运行”会先依次运行它前面还没运行过的单元。`,
    failed: e => `Python 没能启动：${e}`,
    file: "从 file:// 打开的页面不能启动 Pyodide。请通过网站（或 `python -m http.server`）打开本页，或在 Colab、Binder 中运行。",
    run: "运行", running: "运行中……", loading: p => `正在从 Pyodide 的 CDN 加载 ${p}……`,
    nopkg: "这个单元导入的包没能加载：NumPy、SciPy 和 Matplotlib 来自 Pyodide 的 CDN，需要联网。",
    dropped: n => `在浏览器中运行时去掉了 ${n} 行只为本页服务的代码（把数值写进正文、检查正文的说法，或需要 PyTorch 和本书的辅助包 d2lmini）。`,
    constants: "这个单元需要 PyTorch、gensim 或本书的辅助包 d2lmini；这里只运行后面的单元要用到的常量。",
    waiting: i => `上面的第 ${i} 个代码单元没有运行成功（见它的输出），这个单元要等它先运行。`,
    editor: i => `第 ${i} 个代码单元（可编辑）`, output: "输出", figure: "Matplotlib 画出的图",
  } : {
    banner: (n, m) => `Run in your browser: ${n} of this chapter's ${m} code cells need only NumPy, ` +
      "SciPy and Matplotlib; you can now edit and run them in the page (Pyodide: Python compiled " +
      "to WebAssembly). The others need PyTorch, gensim or the book's helper package d2lmini: run those in Colab or Binder.",
    starting: "Starting Python (Pyodide) ...",
    ready: v => `Python ${v} is ready. Running a cell first runs the cells above it that have not run yet.`,
    failed: e => `Python did not start: ${e}`,
    file: "A page opened from file:// cannot start Pyodide. Open this page from the web site (or " +
      "`python -m http.server`), or run the chapter in Colab or Binder.",
    run: "Run", running: "Running ...", loading: p => `Loading ${p} from Pyodide's CDN ...`,
    nopkg: "A package this cell imports could not be loaded: NumPy, SciPy and Matplotlib come " +
      "from Pyodide's CDN and need a network.",
    dropped: n => `${n} line(s) that only the page needs are left out here (they write values into ` +
      "the text, check its sentences, or need PyTorch and the book's helper package d2lmini).",
    constants: "This cell needs PyTorch, gensim or the book's helper package d2lmini; only the constants later " +
      "cells use run here.",
    waiting: i => `Code cell ${i} above did not run (see its output); this cell needs it first.`,
    editor: i => `Code cell ${i} (editable)`, output: "Output", figure: "Figure drawn by Matplotlib",
  };

  // After d2l_browser_run.py (run_cell, take_figures: the build runs cells with the same file):
  // one namespace for the page's cells, and the zh labels' glyphs (a subset of Noto Sans CJK SC
  // that the page writes into Pyodide's file system) after Matplotlib's default font in its
  // fallback list, as d2lmini does.
  const HELPER = `
import json, sys
_d2l_ns = {"__name__": "__main__"}
_d2l_font = {"path": None, "family": None, "added": False}
def _d2l_cjk_font():
    plt = sys.modules.get("matplotlib.pyplot")
    if plt is None or _d2l_font["path"] is None or _d2l_font["added"]:
        return
    from matplotlib import font_manager
    font_manager.fontManager.addfont(_d2l_font["path"])
    family = [f for f in plt.rcParams["font.family"] if f != _d2l_font["family"]]
    plt.rcParams["font.family"] = family + [_d2l_font["family"]]
    _d2l_font["added"] = True
def _d2l_run(code):
    _d2l_cjk_font()
    stdout, stderr, error = run_cell(code, _d2l_ns)
    _d2l_cjk_font()
    return json.dumps({"stdout": stdout, "stderr": stderr, "error": error,
                       "figures": take_figures()})
`;

  const state = {started: false, py: null, cells: [], next: 0, queue: Promise.resolve(),
                 banner: null, status: null, spec: null};

  function el(tag, cls, text) {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined) e.textContent = text;
    return e;
  }

  function say(text, kind) {
    state.status.textContent = text;
    state.status.dataset.state = kind || "";
  }

  function pageName() {
    return decodeURIComponent(location.pathname.split("/").pop() || "index").replace(/\.html$/, "");
  }

  function addBanner() {
    const banner = el("div", "d2l-browser-banner");
    banner.setAttribute("role", "region");
    banner.setAttribute("aria-label", ZH ? "在浏览器中运行" : "Run in your browser");
    banner.tabIndex = -1;
    banner.append(el("p", "d2l-browser-intro"), el("p", "d2l-browser-status"));
    banner.lastChild.setAttribute("role", "status");
    const heading = document.querySelector("article.bd-article h1");
    if (heading) heading.after(banner);
    else (document.querySelector("article.bd-article") || document.body).prepend(banner);
    state.banner = banner;
    state.status = banner.lastChild;
  }

  function addCell(spec, position, input) {
    const box = el("div", "d2l-run");
    box.dataset.index = spec.index;
    const bar = el("div", "d2l-run-bar");
    const button = el("button", "btn btn-sm d2l-run-button", "\u25B6 " + T.run);
    button.type = "button";
    bar.append(button);
    if (spec.constants_only) bar.append(el("span", "d2l-run-note", T.constants));
    else if (spec.dropped) bar.append(el("span", "d2l-run-note", T.dropped(spec.dropped)));
    const editor = el("textarea", "d2l-run-code");
    editor.value = spec.code;
    editor.rows = Math.min(30, spec.code.split("\n").length + 1);
    editor.spellcheck = false;
    editor.setAttribute("aria-label", T.editor(spec.index + 1));
    const output = el("pre", "d2l-run-output");
    output.setAttribute("aria-label", T.output);
    output.setAttribute("aria-live", "polite");
    output.hidden = true;
    const figures = el("div", "d2l-run-figures");
    box.append(bar, editor, output, figures);
    input.after(box);
    const cell = {spec, box, button, editor, output, figures};
    button.addEventListener("click", () => runUpTo(position));
    return cell;
  }

  async function loadPyodideScript() {
    if (window.loadPyodide) return;
    await new Promise((resolve, reject) => {
      const s = document.createElement("script");
      s.src = STATIC + "pyodide/pyodide.js";
      s.onload = resolve;
      s.onerror = () => reject(new Error(s.src));
      document.head.append(s);
    });
  }

  async function startPython() {
    await loadPyodideScript();
    const py = await window.loadPyodide({
      indexURL: STATIC + "pyodide/",
      packageBaseUrl: `https://cdn.jsdelivr.net/pyodide/v${state.spec.pyodide}/full/`,
    });
    const runner = await fetch(STATIC + "d2l_browser_run.py");
    if (!runner.ok) throw new Error(`${runner.status} ${runner.url}`);
    py.runPython(await runner.text());
    await py.runPythonAsync(HELPER);
    const font = state.spec.font;
    if (font) {
      const response = await fetch(STATIC + font.file);
      if (response.ok) {
        py.FS.writeFile("/tmp/d2l-cjk.otf", new Uint8Array(await response.arrayBuffer()));
        const settings = py.globals.get("_d2l_font");
        settings.set("path", "/tmp/d2l-cjk.otf");
        settings.set("family", font.family);
        settings.destroy();
      }
    }
    return py;
  }

  async function execute(cell) {
    const py = state.py;
    cell.button.disabled = true;
    cell.output.hidden = false;
    cell.output.textContent = T.running;
    cell.figures.replaceChildren();
    const code = cell.editor.value;
    const problems = [];
    try {
      await py.loadPackagesFromImports(code, {
        messageCallback: m => { if (/^Loading /.test(m)) cell.output.textContent = T.loading(m.slice(8)); },
        errorCallback: m => problems.push(m),
      });
    } catch (e) {
      problems.push(String(e && e.message || e));
    }
    let result;
    try {
      result = JSON.parse(py.globals.get("_d2l_run")(code));
    } catch (e) {
      result = {stdout: "", stderr: "", error: String(e && e.message || e), figures: []};
    }
    let text = result.stdout + (result.stderr || "") + (result.error ? result.error : "");
    if (problems.length && result.error) {
      text = T.nopkg + "\n\n" + text;
    }
    cell.output.textContent = text;
    cell.output.hidden = text === "";
    cell.box.d2lResult = result;
    cell.output.classList.toggle("d2l-run-error", Boolean(result.error));
    for (const png of result.figures) {
      const img = el("img");
      img.src = "data:image/png;base64," + png;
      img.alt = T.figure;
      cell.figures.append(img);
    }
    cell.box.dataset.ran = result.error ? "error" : "ok";
    cell.button.disabled = false;
    return !result.error;
  }

  // Runs the cells above ``position`` that have not run yet, in order, then that cell; stops at
  // a cell above that fails (its output says why), so that a later try starts from it again.
  function runUpTo(position) {
    state.queue = state.queue.then(async () => {
      if (!state.py) return;
      for (let p = state.next; p < position; p++) {
        if (!await execute(state.cells[p])) {
          const target = state.cells[position];
          target.output.hidden = false;
          target.output.textContent = T.waiting(state.cells[p].spec.index + 1);
          target.box.dataset.ran = "waiting";
          return;
        }
        state.next = p + 1;
      }
      await execute(state.cells[position]);
      state.next = Math.max(state.next, position + 1);
    });
    return state.queue;
  }

  async function start() {
    state.started = true;
    addBanner();
    state.banner.scrollIntoView({block: "start"});
    if (location.protocol === "file:") {
      say(T.file, "unavailable");
      return;
    }
    say(T.starting, "starting");
    try {
      const response = await fetch(STATIC + "browser/" + encodeURIComponent(pageName()) + ".json");
      if (!response.ok) throw new Error(`${response.status} ${response.url}`);
      state.spec = await response.json();
      state.banner.firstChild.textContent = T.banner(state.spec.cells.length, state.spec.code_cells);
      const inputs = Array.from(document.querySelectorAll("div.cell div.cell_input"));
      state.cells = state.spec.cells.map((spec, p) => addCell(spec, p, inputs[spec.index]));
      state.cells.forEach(c => { c.button.disabled = true; });
      state.py = await startPython();
      state.cells.forEach(c => { c.button.disabled = false; });
      say(T.ready(state.py.runPython("import sys; sys.version.split()[0]")), "ready");
      document.documentElement.classList.add("d2l-browser-ready");
    } catch (e) {
      say(T.failed(e && e.message || e), "failed");
    }
  }

  window.D2LBrowser = {
    open() {
      if (!state.started) start();
      else state.banner.scrollIntoView({block: "start"});
      return false;
    },
    runUpTo,
    state,
  };
})();
