// The UI's only script (served from the package; the CSP forbids inline script): a quick
// filter that hides the findings on this page whose text does not contain the typed words.
"use strict";
document.addEventListener("DOMContentLoaded", function () {
  var box = document.getElementById("quick-filter");
  if (!box) { return; }
  box.addEventListener("input", function () {
    var words = box.value.toLowerCase().split(/\s+/).filter(Boolean);
    document.querySelectorAll("li.finding").forEach(function (item) {
      var text = item.textContent.toLowerCase();
      var shown = words.every(function (w) { return text.indexOf(w) !== -1; });
      item.classList.toggle("hidden", !shown);
    });
  });
});
