// The run page hears of the run's steps as they commit (/api/changes, server-sent events)
// and asks for its "moved on" note at once, rather than at its next poll (every 5 s, which
// stays for browsers without EventSource and while the stream reconnects).
(function () {
  "use strict";
  var live = document.getElementById("live");
  if (!live || !live.dataset.changes || !window.EventSource || !window.htmx) {
    return;
  }
  var steps = new EventSource(live.dataset.changes);
  steps.addEventListener("step", function () {
    htmx.trigger(live, "moved");
  });
  window.addEventListener("pagehide", function () {
    steps.close();
  });
})();
