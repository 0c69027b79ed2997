// sessiondb ui: the one script of the viewer. The pages work without it;
// it adds the live refresh of an open conversation (polling, as the store
// has no change notification yet) and the fold/unfold-all buttons. It
// never builds HTML from strings: new messages arrive as HTML the server
// rendered with html/template, parsed inertly by DOMParser.
(function () {
  "use strict";

  function foldButtons() {
    var buttons = document.querySelectorAll("button[data-fold]");
    buttons.forEach(function (b) {
      b.hidden = false;
      b.addEventListener("click", function () {
        var open = b.getAttribute("data-fold") === "open";
        document.querySelectorAll("#messages details").forEach(function (d) { d.open = open; });
      });
    });
  }

  function live() {
    var list = document.getElementById("messages");
    if (!list || !list.dataset.live) return;
    var status = document.getElementById("live-status");
    var base = list.dataset.live.split("?")[0];
    var every = parseInt(list.dataset.pollMs, 10) || 2000;
    var last = (list.dataset.live.match(/after=(\d+)/) || [0, "0"])[1];
    var delay = every;

    function tick() {
      if (document.hidden) { setTimeout(tick, every); return; }
      fetch(base + "?after=" + encodeURIComponent(last), { credentials: "same-origin", headers: { Accept: "text/html" } })
        .then(function (r) {
          if (!r.ok) throw new Error("HTTP " + r.status);
          return r.text();
        })
        .then(function (html) {
          var doc = new DOMParser().parseFromString("<ol>" + html + "</ol>", "text/html");
          var items = doc.querySelectorAll("ol > li.msg");
          items.forEach(function (li) {
            if (document.getElementById(li.id)) return; // already shown
            list.appendChild(document.importNode(li, true));
            last = li.dataset.id;
          });
          if (items.length > 0 && status) {
            status.textContent = items.length + (items.length === 1 ? " new message" : " new messages") + " at " + new Date().toLocaleTimeString();
          }
          delay = every;
        })
        .catch(function (e) {
          if (status) status.textContent = "Live refresh paused (" + e.message + "); retrying.";
          delay = Math.min(delay * 2, 30000);
        })
        .then(function () { setTimeout(tick, delay); });
    }
    setTimeout(tick, every);
  }

  function start() {
    foldButtons();
    live();
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
