// Remember the edition a reader chose with the language switcher; the root chooser
// (_build/html/index.html) highlights it on the next visit.
document.addEventListener("click", function (e) {
  var a = e.target.closest && e.target.closest("a.book-lang-switch");
  if (a) { try { localStorage.setItem("book-lang", a.dataset.lang); } catch (err) {} }
});
