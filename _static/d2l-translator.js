// "Translate it yourself" (chapter 6; d2lmini.book.translator, tools/build/book_sphinx/translator.py): the
// chapter's trained models translate the reader's sentence in this page, with ONNX Runtime Web
// loaded from the site itself (no request leaves it; it works from file:// too).
//
// D2LTranslator.core is the decoding, written to give what d2lmini gives: the tokenizer is
// preprocess_nmt + build_array_nmt, greedy is d2lmini.greedy_search, beam is
// d2lmini.beam_search (GNMT length penalty). The rest builds the panel; the reader's text only
// ever enters the page as text (textContent), never as HTML.
(function (root) {
  "use strict";

  // ---------------------------------------------------------------------------------------
  // the tokenizer: d2lmini.preprocess_nmt, str.split and build_array_nmt
  // ---------------------------------------------------------------------------------------
  var PUNCT = /(?<=[^ ])([,.!?])/g;
  // the characters Python's str.split() splits on (str.isspace)
  var SPACE = /[\t\n\v\f\r\x1c-\x1f \x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]+/;

  function preprocess(text) {
    return text.replace(/\u202f/g, " ").replace(/\u00a0/g, " ").replace(/\u2019/g, "'")
      .toLowerCase().replace(PUNCT, " $1");
  }

  function tokenize(text) {
    return preprocess(text).split(SPACE).filter(function (t) { return t.length > 0; });
  }

  function vocabIndex(tokens) {
    var index = new Map();
    tokens.forEach(function (token, i) { index.set(token, i); });
    return index;
  }

  // The source ids as build_array_nmt makes them (<eos> appended, cut to num_steps), the tokens
  // that map to <unk>, and whether the sentence was cut.
  function encodeSource(config, index, tokens) {
    var ids = tokens.map(function (t) { return index.has(t) ? index.get(t) : config.src_unk; });
    ids.push(config.src_eos);
    var cut = ids.length > config.num_steps;
    var unknown = tokens.filter(function (t) { return !index.has(t); });
    return { ids: ids.slice(0, config.num_steps), unknown: unknown, cut: cut };
  }

  // ---------------------------------------------------------------------------------------
  // the model: the encoder once, the decoder on the whole prefix at every step
  // ---------------------------------------------------------------------------------------
  function int64(ort, values, dims) {
    return new ort.Tensor("int64", BigInt64Array.from(values.map(function (v) {
      return BigInt(v);
    })), dims);
  }

  function Model(ort, config, encoder, decoder) {
    this.ort = ort;
    this.config = config;
    this.encoder = encoder;
    this.decoder = decoder;
    this.srcIndex = vocabIndex(config.src_tokens);
  }

  Model.prototype.encode = async function (ids) {
    var src = int64(this.ort, ids, [1, ids.length]);
    var out = await this.encoder.run({ src: src, src_len: int64(this.ort, [ids.length], [1]) });
    return out.memory;
  };

  // prefixes: B rows of equal length -> { logits: Float32Array (B * V), cross, V }
  Model.prototype.step = async function (memory, srcLen, prefixes) {
    var B = prefixes.length, T = prefixes[0].length, S = memory.dims[1], d = memory.dims[2];
    var mem = memory;
    if (B > 1) {
      var data = new Float32Array(B * S * d);
      for (var b = 0; b < B; b++) {
        data.set(memory.data, b * S * d);
      }
      mem = new this.ort.Tensor("float32", data, [B, S, d]);
    }
    var flat = [];
    prefixes.forEach(function (row) { flat.push.apply(flat, row); });
    var lens = [];
    for (var i = 0; i < B; i++) {
      lens.push(srcLen);
    }
    var out = await this.decoder.run({
      tgt: int64(this.ort, flat, [B, T]), memory: mem, src_len: int64(this.ort, lens, [B]),
    });
    return { logits: out.logits.data, V: out.logits.dims[1], cross: out.cross_attention };
  };

  function argmax(values, start, length) {
    var best = start;
    for (var i = start + 1; i < start + length; i++) {
      if (values[i] > values[best]) {  // the first of equal maxima, as torch.argmax
        best = i;
      }
    }
    return best - start;
  }

  // d2lmini.greedy_search for one sentence: the output ids without <eos>
  async function greedy(model, memory, srcLen, maxLen) {
    var c = model.config, prefix = [c.bos], out = [];
    for (var t = 0; t < maxLen; t++) {
      var r = await model.step(memory, srcLen, [prefix]);
      var next = argmax(r.logits, 0, r.V);
      if (next === c.eos) {
        break;
      }
      out.push(next);
      prefix.push(next);
    }
    return out;
  }

  function logSoftmax(logits, start, V) {  // in float64, as beam_search (logits.double())
    var max = -Infinity, i;
    for (i = start; i < start + V; i++) {
      if (logits[i] > max) {
        max = logits[i];
      }
    }
    var sum = 0;
    for (i = start; i < start + V; i++) {
      sum += Math.exp(logits[i] - max);
    }
    var lse = max + Math.log(sum), out = new Float64Array(V);
    for (i = 0; i < V; i++) {
      out[i] = logits[start + i] - lse;
    }
    return out;
  }

  // the 2k largest of values (descending; equal values in index order), as indices
  function topIndices(values, n) {
    var idx = [];
    for (var i = 0; i < values.length; i++) {
      if (idx.length < n || values[i] > values[idx[idx.length - 1]]) {
        var j = idx.length < n ? idx.length : n - 1;
        idx[j] = i;
        while (j > 0 && values[idx[j]] > values[idx[j - 1]]) {
          var tmp = idx[j]; idx[j] = idx[j - 1]; idx[j - 1] = tmp; j--;
        }
      }
    }
    return idx;
  }

  // d2lmini.beam_search for one sentence (penalty 'gnmt'): the best output ids without <eos>
  async function beam(model, memory, srcLen, maxLen, k, alpha) {
    var c = model.config, eos = c.eos;
    var penalty = function (n) { return Math.pow((5 + n) / 6, alpha); };
    var raw = [0], seqs = [[]], numDone = 0, best = -Infinity, bestTokens = [];
    for (var b = 1; b < k; b++) {
      raw.push(-Infinity);
      seqs.push([]);
    }
    function finish(mask, scores, rows) {
      var j = -1, top = -Infinity;
      for (var i = 0; i < scores.length; i++) {
        var s = mask[i] ? scores[i] : -Infinity;
        if (j < 0 || s > top) {
          top = s;
          j = i;
        }
      }
      if (top > best) {
        best = top;
        bestTokens = rows[j].slice();
      }
    }
    for (var t = 0; t < maxLen; t++) {
      var r = await model.step(memory, srcLen, seqs.map(function (s) { return [c.bos].concat(s); }));
      var V = r.V, cand = new Float64Array(k * V);
      for (b = 0; b < k; b++) {
        var lp = logSoftmax(r.logits, b * V, V);
        for (var v = 0; v < V; v++) {
          cand[b * V + v] = raw[b] + lp[v];
        }
      }
      var idx = topIndices(cand, 2 * k);
      var top = idx.map(function (i) { return cand[i]; });
      var parent = idx.map(function (i) { return Math.floor(i / V); });
      var token = idx.map(function (i) { return i % V; });
      var isEos = token.map(function (tok) { return tok === eos; });
      var ends = isEos.map(function (e, i) { return e && isFinite(top[i]) && i < k; });
      var length = penalty(t + 1);
      finish(ends, top.map(function (s) { return s / length; }),
        parent.map(function (p) { return seqs[p]; }));
      ends.forEach(function (e) { if (e) { numDone++; } });
      var keep = [];  // the k best that do not end go on (then, if fewer, those that end)
      for (var i = 0; i < 2 * k && keep.length < k; i++) {
        if (!isEos[i]) {
          keep.push(i);
        }
      }
      for (i = 0; i < 2 * k && keep.length < k; i++) {
        if (isEos[i]) {
          keep.push(i);
        }
      }
      raw = keep.map(function (i) { return top[i]; });
      seqs = keep.map(function (i) { return seqs[parent[i]].concat([token[i]]); });
      var cut = maxLen <= t + 1;
      if (cut) {
        finish(raw.map(isFinite), raw.map(function (s) { return s / length; }), seqs);
      }
      if (numDone >= k || cut) {
        break;
      }
    }
    return bestTokens;
  }

  // The cross-attention weights of an output: [layer][head][row][column], a row per output
  // token and one for <eos>, a column per source token (<eos> included).
  async function crossAttention(model, memory, srcLen, out) {
    var c = model.config, r = await model.step(memory, srcLen, [[c.bos].concat(out)]);
    var dims = r.cross.dims, data = r.cross.data;  // (L, 1, h, T, S)
    var L = dims[0], h = dims[2], T = dims[3], S = dims[4], w = [];
    for (var l = 0; l < L; l++) {
      var layer = [];
      for (var hd = 0; hd < h; hd++) {
        var rows = [];
        for (var q = 0; q < T; q++) {
          var base = ((l * h + hd) * T + q) * S;
          rows.push(Array.from(data.subarray(base, base + S)));
        }
        layer.push(rows);
      }
      w.push(layer);
    }
    return w;
  }

  // Everything the panel shows for one sentence and one model.
  async function translate(model, text, options) {
    var c = model.config, tokens = tokenize(text);
    var src = encodeSource(c, model.srcIndex, tokens);
    var memory = await model.encode(src.ids);
    var maxLen = src.ids.length + options.maxExtra;
    var g = await greedy(model, memory, src.ids.length, maxLen);
    var bm = await beam(model, memory, src.ids.length, maxLen, options.beamSize, options.alpha);
    var words = function (ids) { return ids.map(function (i) { return c.tgt_tokens[i]; }); };
    return {
      tokens: tokens, srcIds: src.ids, unknown: src.unknown, cut: src.cut,
      greedy: words(g), beam: words(bm), greedyIds: g, beamIds: bm,
      attention: await crossAttention(model, memory, src.ids.length, bm),
    };
  }

  function decodeBase64(text) {
    if (typeof Uint8Array.fromBase64 === "function") {
      return Uint8Array.fromBase64(text);  // native, several times faster than the loop
    }
    var bytes = atob(text), out = new Uint8Array(bytes.length);
    for (var i = 0; i < bytes.length; i++) {
      out[i] = bytes.charCodeAt(i);
    }
    return out;
  }


  // ---------------------------------------------------------------------------------------
  // the panel
  // ---------------------------------------------------------------------------------------
  var MAX_CHARS = 200;
  var LABELS = {
    en: {
      input: "An English sentence", placeholder: "e.g. I'm home.",
      examples: "Or choose a held-out sentence:", examplesNone: "(held-out sentences)",
      loading: "Loading the models …", ready: "Ready: type an English sentence.",
      translating: "Translating …", empty: "Type an English sentence to translate it.",
      tooLong: "That is {n} characters; the models were trained on short sentences, so type " +
        "at most {max}.",
      allUnknown: "None of these words is in this model's vocabulary ({words}): it could only " +
        "guess. Try everyday words.",
      unknown: "Not in the model's vocabulary (read as <unk>): {words}",
      noneUnknown: "Every word is in the model's vocabulary.",
      cut: "The model reads at most {n} tokens (<eos> included); the rest was left out.",
      greedy: "Greedy search", beam: "Beam search (beam {k})",
      heat: "Cross-attention of the beam-search output. Point at an output token (or focus it " +
        "with the Tab key) to see which source tokens it attended to.",
      layer: "Layer", head: "Head", output: "output", source: "source",
      failed: "The translator could not start in this browser: {error}",
      done: "Translated in {ms} ms.",
    },
    zh: {
      input: "英语句子", placeholder: "例如 I'm home.",
      examples: "或者选一个留出的句子：", examplesNone: "（留出的句子）",
      loading: "正在加载模型……", ready: "就绪：请输入一个英语句子。",
      translating: "正在翻译……", empty: "输入一个英语句子即可翻译。",
      tooLong: "这段文字有 {n} 个字符；模型是用短句训练的，请输入不超过 {max} 个字符。",
      allUnknown: "这些词都不在这个模型的词表里（{words}），它只能瞎猜。试试日常用词。",
      unknown: "不在模型词表里的词（读作 <unk>）：{words}",
      noneUnknown: "每个词都在模型的词表里。",
      cut: "模型最多读入 {n} 个词元（含 <eos>），其余部分被略去了。",
      greedy: "贪心搜索", beam: "束搜索（束宽 {k}）",
      heat: "束搜索输出的交叉注意力。指向一个输出词元（或用 Tab 键选中它），" +
        "可以看到它注意了哪些源词元。",
      layer: "层", head: "头", output: "输出", source: "源",
      failed: "翻译器无法在这个浏览器中启动：{error}",
      done: "翻译用时 {ms} 毫秒。",
    },
  };

  function fill(template, values) {
    return template.replace(/\{(\w+)\}/g, function (m, key) {
      return key in values ? String(values[key]) : m;
    });
  }

  function el(tag, props, children) {
    var node = document.createElement(tag);
    Object.keys(props || {}).forEach(function (key) {
      if (key === "text") {
        node.textContent = props[key];  // text, never HTML
      } else if (key === "className") {
        node.className = props[key];
      } else {
        node.setAttribute(key, props[key]);
      }
    });
    (children || []).forEach(function (child) { node.appendChild(child); });
    return node;
  }

  var BASE = (function () {
    var script = typeof document !== "undefined" ? document.currentScript : null;
    return script ? script.src.replace(/[^/]*$/, "") : "_static/";
  })();

  function loadScript(src) {
    return new Promise(function (resolve, reject) {
      var script = document.createElement("script");
      script.src = BASE + src;
      script.onload = resolve;
      script.onerror = function () { reject(new Error("cannot load " + src)); };
      document.head.appendChild(script);
    });
  }

  var runtime = null;  // one ONNX Runtime per page
  var timings = {};  // milliseconds of each loading step (the tests report them)
  function mark(name, since) {
    timings[name] = Math.round(performance.now() - since);
  }
  // ONNX Runtime Web from the site. Served over HTTP, it fetches its WebAssembly and compiles
  // it while it downloads; read from file://, where a page may neither fetch a file nor import a
  // module, the glue module comes as a string (imported from a blob URL) and the WebAssembly in
  // base64, both in classic scripts.
  function loadRuntime() {
    if (!runtime) {
      var t0 = performance.now(), fromDisk = root.location.protocol === "file:";
      runtime = loadScript("ort/ort.wasm.min.js")
        .then(function () { return fromDisk ? loadScript("ort/ort-glue.js") : null; })
        .then(function () { return fromDisk ? loadScript("ort/ort-wasm.js") : null; })
        .then(function () {
          mark("runtime scripts", t0);
          var ort = root.ort;
          ort.env.wasm.numThreads = 1;  // threads need cross-origin isolation
          if (fromDisk) {
            ort.env.wasm.wasmBinary = decodeBase64(root.D2L_ORT_WASM);
            ort.env.wasm.wasmPaths = { mjs: URL.createObjectURL(
              new Blob([root.D2L_ORT_GLUE], { type: "text/javascript" })) };
          } else {
            ort.env.wasm.wasmPaths = new URL("ort/", BASE).href;
          }
          return ort;
        });
    }
    return runtime;
  }

  async function loadModel(name, file) {
    var t0 = performance.now(), ort = await loadRuntime();
    await loadScript(file);
    var payload = root.D2L_TRANSLATOR_MODELS[name];
    // the graphs as exported: their sessions start twice as fast, and they compute what
    // PyTorch computes, step by step
    var options = { graphOptimizationLevel: "disabled" };
    var encoder = await ort.InferenceSession.create(decodeBase64(payload.encoder), options);
    var decoder = await ort.InferenceSession.create(decodeBase64(payload.decoder), options);
    mark(name, t0);
    var model = new Model(ort, payload.config, encoder, decoder);
    model.name = name;
    model.heading = payload.heading;
    model.examples = payload.examples;
    return model;
  }

  function Panel(div) {
    this.div = div;
    this.lang = div.getAttribute("data-lang") === "zh" ? "zh" : "en";
    this.t = LABELS[this.lang];
    this.specs = Array.from(div.querySelectorAll("span.d2l-translator-model")).map(function (s) {
      return { name: s.getAttribute("data-name"), file: s.getAttribute("data-file") };
    });
    this.models = null;
    this.pending = null;
    this.busy = false;
    this.shown = 0;  // texts answered so far (the tests wait for it)
    this.build();
  }

  Panel.prototype.build = function () {
    var self = this, t = this.t, id = "d2l-translator-input-" + Math.random().toString(36).slice(2);
    var fallback = this.div.querySelector(".d2l-translator-fallback");
    if (fallback) {
      fallback.hidden = true;
    }
    this.input = el("input", { type: "text", id: id, placeholder: t.placeholder,
      autocomplete: "off", spellcheck: "false", className: "d2l-translator-input" });
    this.picker = el("select", { className: "d2l-translator-examples", "aria-label": t.examples },
      [el("option", { value: "", text: t.examplesNone })]);
    this.status = el("p", { className: "d2l-translator-status", role: "status",
      "aria-live": "polite" });
    this.results = el("div", { className: "d2l-translator-results" });
    this.div.appendChild(el("div", { className: "d2l-translator-form" }, [
      el("label", { for: id, text: t.input }), this.input,
      el("label", { className: "d2l-translator-examples-label", text: t.examples }, [this.picker]),
    ]));
    this.div.appendChild(this.status);
    this.div.appendChild(this.results);
    var timer = null;
    this.input.addEventListener("input", function () {
      self.typedAt = performance.now();
      self.start();
      clearTimeout(timer);
      timer = setTimeout(function () { self.request(self.input.value); }, 150);
    });
    this.input.addEventListener("focus", function () { self.start(); });
    this.picker.addEventListener("change", function () {
      if (self.picker.value) {
        self.input.value = self.picker.value;
        self.typedAt = performance.now();
        self.request(self.input.value);
      }
    });
    if ("IntersectionObserver" in root) {
      var observer = new IntersectionObserver(function (entries) {
        if (entries.some(function (e) { return e.isIntersecting; })) {
          observer.disconnect();
          self.start();
        }
      }, { rootMargin: "1500px 0px" });  // a little before the reader gets there
      observer.observe(this.div);
    } else {
      this.start();
    }
  };

  Panel.prototype.start = function () {
    var self = this;
    if (this.loading) {
      return this.loading;
    }
    this.div.classList.add("d2l-translator-loading");
    this.say(this.t.loading);
    var started = performance.now();
    this.loading = Promise.all(this.specs.map(function (s) { return loadModel(s.name, s.file); }))
      .then(function (models) {
        self.models = models;
        self.div.setAttribute("data-load-ms", String(Math.round(performance.now() - started)));
        self.div.classList.remove("d2l-translator-loading");
        self.div.classList.add("d2l-translator-ready");
        var seen = new Set();
        models.forEach(function (m) {
          (m.examples || []).forEach(function (source) {
            if (!seen.has(source)) {
              seen.add(source);
              self.picker.appendChild(el("option", { value: source, text: source }));
            }
          });
        });
        if (self.pending === null) {
          self.say(self.t.ready);
        }
        self.pump();
      })
      .catch(function (error) {
        self.div.classList.add("d2l-translator-failed");
        self.say(fill(self.t.failed, { error: error && error.message ? error.message : error }));
        console.error("d2l-translator:", error);
      });
    return this.loading;
  };

  Panel.prototype.say = function (text) {
    this.status.textContent = text;
  };

  Panel.prototype.request = function (text) {
    this.pending = text;
    this.pump();
  };

  // One translation at a time (a session runs one request at a time); the newest text wins.
  Panel.prototype.pump = async function () {
    if (this.busy || !this.models || this.pending === null) {
      return;
    }
    var text = this.pending;
    this.pending = null;
    this.busy = true;
    try {
      await this.show(text);
    } catch (error) {
      this.say(fill(this.t.failed, { error: error && error.message ? error.message : error }));
      console.error("d2l-translator:", error);
    }
    this.shown++;
    this.busy = false;
    if (this.pending !== null) {
      this.pump();
    }
  };

  // Each result appears as soon as it is known: the greedy translation first, then beam
  // search's, then the heat map; a newer text stops the work on an older one.
  Panel.prototype.show = async function (text) {
    var self = this, t = this.t, started = this.typedAt || performance.now();
    var stale = function () { return self.pending !== null; };
    this.results.textContent = "";
    this.div.removeAttribute("data-ms");
    this.div.removeAttribute("data-first-ms");
    if (!text.trim()) {
      this.say(t.empty);
      return;
    }
    if (text.length > MAX_CHARS) {
      this.say(fill(t.tooLong, { n: text.length, max: MAX_CHARS }));
      return;
    }
    this.say(t.translating);
    var tokens = tokenize(text);
    var words = tokens.filter(function (w) { return /[^,.!?]/.test(w); });
    for (var i = 0; i < this.models.length; i++) {
      var model = this.models[i], c = model.config, index = model.srcIndex;
      var heading = el("h4", { text: model.heading });
      if (words.length && words.every(function (w) { return !index.has(w); })) {
        this.results.appendChild(el("section", { className: "d2l-translator-model-result",
          "data-model": model.name }, [heading, el("p", { className: "d2l-translator-message",
          text: fill(t.allUnknown, { words: words.join(" ") }) })]));
        continue;
      }
      var src = encodeSource(c, index, tokens), n = src.ids.length;
      var out = this.section(model, src, heading);
      this.results.appendChild(out.section);
      var memory = await model.encode(src.ids);
      var g = await greedy(model, memory, n, n + c.max_extra);
      if (stale()) {
        return;
      }
      out.greedy.textContent = this.words(model, g);
      out.greedy.removeAttribute("aria-busy");
      if (!this.div.hasAttribute("data-first-ms")) {
        this.div.setAttribute("data-first-ms", String(Math.round(performance.now() - started)));
      }
      var b = await beam(model, memory, n, n + c.max_extra, c.beam_size, c.alpha);
      if (stale()) {
        return;
      }
      out.beam.textContent = this.words(model, b);
      out.beam.removeAttribute("aria-busy");
      var attention = await crossAttention(model, memory, n, b);
      if (stale()) {
        return;
      }
      out.section.appendChild(this.heatmap(model, { tokens: tokens, srcIds: src.ids,
        cut: src.cut, beam: b.map(function (id) { return c.tgt_tokens[id]; }),
        attention: attention }));
    }
    var ms = Math.round(performance.now() - started);
    this.div.setAttribute("data-ms", String(ms));
    this.say(fill(t.done, { ms: ms }));
  };

  Panel.prototype.words = function (model, ids) {
    var c = model.config;
    return ids.map(function (id) { return c.tgt_tokens[id]; }).join(c.sep);
  };

  // A model's result before it is known: the heading, the two outputs (busy), the words the
  // model does not know and whether the sentence was cut.
  Panel.prototype.section = function (model, src, heading) {
    var t = this.t, c = model.config, lang = this.targetLang(model);
    var section = el("section", { className: "d2l-translator-model-result",
      "data-model": model.name }, [heading]);
    var greedyOut = el("dd", { className: "d2l-translator-greedy", lang: lang,
      "aria-busy": "true", text: "…" });
    var beamOut = el("dd", { className: "d2l-translator-beam", lang: lang, "aria-busy": "true",
      text: "…" });
    section.appendChild(el("dl", { className: "d2l-translator-outputs" }, [
      el("dt", { text: t.greedy }), greedyOut,
      el("dt", { text: fill(t.beam, { k: c.beam_size }) }), beamOut]));
    section.appendChild(el("p", { className: "d2l-translator-unknown", text: src.unknown.length ?
      fill(t.unknown, { words: src.unknown.join(" ") }) : t.noneUnknown }));
    if (src.cut) {
      section.appendChild(el("p", { className: "d2l-translator-message",
        text: fill(t.cut, { n: c.num_steps }) }));
    }
    return { section: section, greedy: greedyOut, beam: beamOut };
  };

  Panel.prototype.targetLang = function (model) {
    return model.name.split("-")[0] === "cmn" ? "zh" : "fr";
  };

  Panel.prototype.heatmap = function (model, r) {
    var self = this, t = this.t;
    var source = r.tokens.slice(0, r.srcIds.length - (r.cut ? 0 : 1)).map(function (w, i) {
      return r.srcIds[i] === model.config.src_unk ? "<unk>" : w;
    });
    if (!r.cut) {
      source.push("<eos>");
    }
    var output = r.beam.concat(["<eos>"]);
    var figure = el("figure", { className: "d2l-translator-heat" });
    var layer = el("select", { "aria-label": t.layer, className: "d2l-translator-layer" });
    var head = el("select", { "aria-label": t.head, className: "d2l-translator-head" });
    for (var l = 0; l < r.attention.length; l++) {
      layer.appendChild(el("option", { value: String(l), text: t.layer + " " + (l + 1) }));
    }
    for (var h = 0; h < r.attention[0].length; h++) {
      head.appendChild(el("option", { value: String(h), text: t.head + " " + (h + 1) }));
    }
    var table = el("table", { className: "d2l-translator-grid" });
    var draw = function () {
      var w = r.attention[+layer.value][+head.value];
      table.textContent = "";
      var top = el("tr", {}, [el("th", { text: t.output + " \\ " + t.source })]);
      source.forEach(function (s) {
        top.appendChild(el("th", { scope: "col", lang: "en", text: s }));
      });
      table.appendChild(el("thead", {}, [top]));
      var body = el("tbody");
      output.forEach(function (o, q) {
        var label = el("th", { scope: "row", tabindex: "0", lang: self.targetLang(model),
          text: o });
        var row = el("tr", {}, [label]);
        source.forEach(function (s, k) {
          var cell = el("td", { title: o + " → " + s + ": " + w[q][k].toFixed(3),
            "data-weight": String(w[q][k]) });
          cell.style.backgroundColor = "rgba(31, 119, 180, " + w[q][k].toFixed(3) + ")";
          row.appendChild(cell);
        });
        var highlight = function (on) {
          row.classList.toggle("d2l-translator-pointed", on);
          top.querySelectorAll("th[scope=col]").forEach(function (th, k) {
            th.style.backgroundColor = on ? "rgba(255, 127, 14, " + w[q][k].toFixed(3) + ")" : "";
          });
        };
        [label, row].forEach(function (node) {
          node.addEventListener("mouseenter", function () { highlight(true); });
          node.addEventListener("mouseleave", function () { highlight(false); });
        });
        label.addEventListener("focus", function () { highlight(true); });
        label.addEventListener("blur", function () { highlight(false); });
        body.appendChild(row);
      });
      table.appendChild(body);
    };
    layer.addEventListener("change", draw);
    head.addEventListener("change", draw);
    draw();
    figure.appendChild(el("figcaption", { text: t.heat }));
    figure.appendChild(el("div", { className: "d2l-translator-controls" }, [layer, head]));
    figure.appendChild(el("div", { className: "d2l-translator-scroll" }, [table]));
    return figure;
  };

  function startAll() {
    document.querySelectorAll("div.d2l-translator").forEach(function (div) {
      div.d2lPanel = new Panel(div);
    });
  }

  if (typeof document !== "undefined") {
    if (document.readyState === "loading") {
      document.addEventListener("DOMContentLoaded", startAll);
    } else {
      startAll();
    }
  }

  var core = {
    preprocess: preprocess, tokenize: tokenize, encodeSource: encodeSource, Model: Model,
    greedy: greedy, beam: beam, crossAttention: crossAttention, translate: translate,
    decodeBase64: decodeBase64, timings: timings,
  };
  root.D2LTranslator = { core: core };
})(typeof window !== "undefined" ? window : globalThis);
