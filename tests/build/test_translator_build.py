"""The build's side of chapter 6's translator: tools/build/book_sphinx/translator.py moves the
panel's payloads out of the page, and tools/build/build_book.py packs ONNX Runtime Web as classic
scripts (a page read from file:// can load those, not a module or a fetched file)."""
from __future__ import annotations

import base64
import json
from pathlib import Path

from tools.build import build_book
from tools.build.book_sphinx.translator import MARKER, move_payloads

ROOT = Path(__file__).resolve().parents[2]

def test_move_payloads(tmp_path):
    model = {"config": {"sep": ""}, "encoder": "AAEC", "decoder": "AwQF", "heading": "英译中",
             "examples": ["go ."]}
    text = (f'{MARKER} data-lang="zh">'
            '<script type="application/json" class="d2l-translator-model" data-name="cmn-eng">'
            f'{json.dumps(model, ensure_ascii=False)}</script>'
            '<script type="application/json" class="d2l-translator-reference" '
            'data-name="cmn-eng">[{"source": "go ."}]</script>'
            '<p class="d2l-translator-fallback">PDF</p></div>')
    out = move_payloads(text, tmp_path / "translator")
    assert out == (f'{MARKER} data-lang="zh"><span class="d2l-translator-model" '
                   'data-name="cmn-eng" data-file="translator/cmn-eng.js" hidden></span>'
                   '<p class="d2l-translator-fallback">PDF</p></div>')
    script = (tmp_path / "translator" / "cmn-eng.js").read_text(encoding="utf-8")
    prefix = "(window.D2L_TRANSLATOR_MODELS = window.D2L_TRANSLATOR_MODELS || {})['cmn-eng'] = "
    assert script.startswith(prefix) and script.endswith(";\n")
    assert json.loads(script[len(prefix):-2]) == model
    reference = (tmp_path / "translator" / "cmn-eng-reference.json").read_text(encoding="utf-8")
    assert json.loads(reference) == [{"source": "go ."}]


def test_pack_ort(tmp_path):
    dist = tmp_path / "onnxruntime-web" / "dist"
    dist.mkdir(parents=True)
    (dist.parent / "package.json").write_text('{"version": "9.9.9"}')
    (dist / "ort.wasm.min.js").write_text("var ort = {};")
    (dist / "ort-wasm-simd-threaded.mjs").write_text('export default "</script>\\n";')
    (dist / "ort-wasm-simd-threaded.wasm").write_bytes(b"\0asm\x01\0\0\0")
    dest = tmp_path / "ort"
    build_book.pack_ort(dist, dest)
    assert (dest / "ort.wasm.min.js").read_text() == "var ort = {};"
    assert (dest / "ort-wasm-simd-threaded.wasm").read_bytes() == b"\0asm\x01\0\0\0"
    assert (dest / "ort-wasm-simd-threaded.mjs").read_text() == 'export default "</script>\\n";'
    glue = (dest / "ort-glue.js").read_text()
    assert glue.startswith("window.D2L_ORT_GLUE = ")
    assert json.loads(glue[len("window.D2L_ORT_GLUE = "):-2]) == 'export default "</script>\\n";'
    wasm = (dest / "ort-wasm.js").read_text()
    assert base64.b64decode(wasm.split('"')[1]) == b"\0asm\x01\0\0\0"
    assert (dest / ".version").read_text() == "9.9.9"
    (dest / "ort.wasm.min.js").write_text("stale")
    build_book.pack_ort(dist, dest)  # the same version: nothing is written again
    assert (dest / "ort.wasm.min.js").read_text() == "stale"
    (dest / "ort-wasm.js").unlink()
    build_book.pack_ort(dist, dest)  # a file missing: all written again
    assert (dest / "ort-wasm.js").is_file() and (dest / "ort.wasm.min.js").read_text() != "stale"
