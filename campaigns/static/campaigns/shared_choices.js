// Fills the campaign page's choice selects from lists written once in the page
// (campaigns/admin/shared_choices.py). Each select arrives holding only its chosen options, so
// what it posts does not depend on this script; here the other options are added around them,
// keeping the chosen ones chosen. Runs once per select: it marks what it filled and never
// watches the DOM (rows added by "Add another" are clones of the filled empty row).
"use strict";
(function () {
  function lists() {
    var node = document.getElementById("shared-choices");
    return node ? JSON.parse(node.textContent) : {};
  }

  function fill(select, choices) {
    var chosen = {};
    var blank = null;
    Array.prototype.forEach.call(select.options, function (option) {
      if (option.value === "") { blank = option; } else if (option.selected) { chosen[option.value] = true; }
    });
    var fragment = document.createDocumentFragment();
    if (blank) { fragment.appendChild(blank); }
    choices.forEach(function (pair) {
      var on = chosen[pair[0]] === true;
      fragment.appendChild(new Option(pair[1], pair[0], on, on));
    });
    select.replaceChildren(fragment);
    select.setAttribute("data-shared-filled", "1");
  }

  function fillAll(root, all) {
    root.querySelectorAll("select[data-shared-choices]:not([data-shared-filled])").forEach(
      function (select) {
        var choices = all[select.getAttribute("data-shared-choices")];
        if (choices) { fill(select, choices); }
      }
    );
  }

  function start() {
    var all = lists();
    fillAll(document, all);
    document.addEventListener("formset:added", function (event) { fillAll(event.target, all); });
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", start);
  } else {
    start();
  }
})();
