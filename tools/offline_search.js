// Search in the site opened from the file system (site/index.html), without a server.
//
// Material runs its search in a web worker, and browsers refuse to start workers from
// file:// pages. There, this runs the same worker script in a hidden iframe of the page's
// own origin: messages go in as "message" events on the iframe's window, and the worker's
// postMessage() comes back to the page. Served over HTTP it does nothing. Material itself
// reads the index from search/search_index.js on file:// (written by the build).
(function () {
  "use strict";
  if (location.protocol !== "file:") return;

  function FileWorker(url) {
    var worker = this;
    var listeners = [];
    var waiting = [];
    var ready = false;
    var frame = document.createElement("iframe");
    frame.setAttribute("aria-hidden", "true");
    frame.style.display = "none";
    (document.body || document.documentElement).appendChild(frame);
    var inside = frame.contentWindow;

    function deliver(data) {
      var event = { type: "message", data: data, target: worker };
      if (typeof worker.onmessage === "function") worker.onmessage(event);
      listeners.slice().forEach(function (listener) { listener.call(worker, event); });
    }
    function send(data) {
      var copy = inside.structuredClone(data);  // objects of the worker's own realm
      inside.dispatchEvent(new inside.MessageEvent("message", { data: copy }));
    }

    inside.postMessage = function (data) {
      var copy = window.structuredClone(data);
      setTimeout(function () { deliver(copy); }, 0);
    };
    this.onmessage = null;
    this.onerror = null;
    this.addEventListener = function (type, listener) {
      if (type === "message") listeners.push(listener);
    };
    this.removeEventListener = function (type, listener) {
      var at = listeners.indexOf(listener);
      if (at >= 0) listeners.splice(at, 1);
    };
    this.postMessage = function (data) {
      if (ready) send(data); else waiting.push(data);
    };
    this.terminate = function () { frame.remove(); };

    var script = inside.document.createElement("script");
    script.src = new URL(url, location.href).href;
    script.onload = function () {
      ready = true;
      waiting.splice(0).forEach(send);
    };
    script.onerror = function (error) {
      if (typeof worker.onerror === "function") worker.onerror(error);
    };
    inside.document.head.appendChild(script);
  }

  window.Worker = FileWorker;
})();
