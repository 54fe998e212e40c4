// Interactive figures (book.interactive, tools/build/book_sphinx/vega.py): each <div class="d2l-vega">
// holds a Vega-Lite specification and the static figure as an image. The live chart, drawn with
// the Vega libraries this page loads from the site itself, replaces the image; where it cannot
// be drawn, the image stays.
(function () {
  "use strict";
  function embed(div) {
    var img = div.querySelector("img.d2l-vega-static");
    var spec = JSON.parse(div.getAttribute("data-spec"));
    if (img && img.alt) {
      spec.description = img.alt; // the chart's accessible name (Vega writes it as aria-label)
    }
    var target = document.createElement("div");
    div.appendChild(target);
    return vegaEmbed(target, spec, { actions: false, renderer: "svg" }).then(function (result) {
      if (img) {
        img.hidden = true;
      }
      div.classList.add("d2l-vega-live");
      div.d2lView = result.view;
    }).catch(function (error) {
      div.removeChild(target);
      div.classList.add("d2l-vega-failed");
      console.error("d2l-vega:", error);
    });
  }
  function embedAll() {
    if (typeof vegaEmbed !== "function") {
      return;
    }
    document.querySelectorAll("div.d2l-vega").forEach(embed);
  }
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", embedAll);
  } else {
    embedAll();
  }
})();
