/*
 * Small behaviours of our admin pages, from a static file: the Content-Security-Policy
 * (config/settings.py) runs no inline script and no on… attribute.
 * - A <select data-submit-on-change> submits its form when it changes (the compare page's
 *   metric; a <noscript> button does it without JavaScript).
 * - A page with an #error-summary (the campaign page) opens on it: Django's admin would focus
 *   the first field further down.
 * - MLflow's "View run at …/mlflow/#/experiments/E/runs/R" lands on a page marked
 *   data-mlflow-landing; the fragment never reaches the server, so this goes to /runs/R/.
 */
(function () {
  "use strict";

  document.addEventListener("change", function (event) {
    var select = event.target;
    if (select && select.matches && select.matches("select[data-submit-on-change]") && select.form) {
      select.form.submit();
    }
  });

  window.addEventListener("load", function () {
    var note = document.getElementById("error-summary");
    if (note) {
      note.scrollIntoView({block: "start"});
      note.focus({preventScroll: true});
    }
  });

  if (document.documentElement.hasAttribute("data-mlflow-landing")) {
    var m = /\/runs\/([^/?#]+)/.exec(window.location.hash || "");
    window.location.replace(m ? "/runs/" + m[1] + "/" : "/admin/campaigns/run/");
  }
})();
