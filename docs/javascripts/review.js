/* profsite review threads (generators/review): written by hand, no library, nothing loaded
 * from outside the site.
 *
 * 1. Every page: the threads the build wrote into the review panel (section#ps-review) are
 *    moved beside what they are about - a table row or table (after its table), a figure, a
 *    claim's paragraph, or the paragraph of a quoted text (which is marked) - following the
 *    place the build decided (data-place, data-anchor, data-find/-prefix/-suffix). A thread
 *    whose place is not on the page stays in the panel.
 * 2. Under the review server (`make review`), which marks its pages with
 *    <meta name="profsite-review-api"> and its CSRF token <meta name="profsite-csrf">, the
 *    page becomes writable: a review bar at the top (the page's counts, the dashboard, how
 *    to comment); select text and press its button, or the comment button a table row shows
 *    on hover or a figure's, write a comment; reply, resolve, won't fix, reopen. After each
 *    write (and when the tab comes back into view) the panel is fetched again from the API
 *    (GET /api/panel: the build's own renderer over the thread files as they are now), so
 *    the counts and threads are live; the dashboard page fetches its content the same way.
 *    A comment being written is kept in localStorage until it is sent, so a reload (the
 *    live reload after an edit) loses nothing. Writes send JSON with the X-CSRF-Token
 *    header. Anywhere else (an offline copy, a published site) the threads are read-only.
 *
 * User text is only ever put into the page as text (textContent) or as the server's
 * sanitised HTML.
 */
(function () {
  "use strict";

  var SKIP = ".ps-review, .ps-thread, .ps-here, .ps-composer, .ps-select-button, .headerlink, script, style";

  function article() {
    return document.querySelector("article.md-content__inner");
  }

  function panel() {
    return document.getElementById("ps-review");
  }

  /* -- text of the article, without the review's own elements ---------------------------- */
  function textNodes(root) {
    var out = [];
    var walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT, {
      acceptNode: function (node) {
        var el = node.parentElement;
        return el && el.closest(SKIP) ? NodeFilter.FILTER_REJECT : NodeFilter.FILTER_ACCEPT;
      },
    });
    while (walker.nextNode()) out.push(walker.currentNode);
    return out;
  }

  /* The article's characters without whitespace, each mapped back to (node, offset): the
   * server and the browser may space block boundaries differently, so matching ignores
   * whitespace altogether. */
  function index(root) {
    var chars = [], where = [];
    textNodes(root).forEach(function (node) {
      var text = node.nodeValue;
      for (var i = 0; i < text.length; i++) {
        if (!/\s/.test(text[i])) {
          chars.push(text[i]);
          where.push([node, i]);
        }
      }
    });
    return { text: chars.join(""), where: where };
  }

  function squeeze(text) {
    return (text || "").replace(/\s+/g, "");
  }

  function similarity(a, b) {
    var n = 0;
    while (n < a.length && n < b.length && a[n] === b[n]) n++;
    return n;
  }

  function findText(root, find, prefix, suffix) {
    var idx = index(root), needle = squeeze(find);
    if (!needle) return null;
    var best = null, bestScore = -1, at = idx.text.indexOf(needle);
    var pre = squeeze(prefix).split("").reverse().join(""), post = squeeze(suffix);
    while (at >= 0) {
      var before = idx.text.slice(Math.max(0, at - pre.length), at).split("").reverse().join("");
      var after = idx.text.slice(at + needle.length, at + needle.length + post.length);
      var score = similarity(before, pre) + similarity(after, post);
      if (score > bestScore) {
        best = at;
        bestScore = score;
      }
      at = idx.text.indexOf(needle, at + 1);
    }
    if (best === null) return null;
    return { start: idx.where[best], end: idx.where[best + needle.length - 1] };
  }

  function mark(found, threadId) {
    var range = document.createRange();
    range.setStart(found.start[0], found.start[1]);
    range.setEnd(found.end[0], found.end[1] + 1);
    var nodes = textNodes(range.commonAncestorContainer.nodeType === 1 ? range.commonAncestorContainer : range.commonAncestorContainer.parentNode)
      .filter(function (n) { return range.intersectsNode(n); });
    nodes.forEach(function (node) {
      var start = node === found.start[0] ? found.start[1] : 0;
      var end = node === found.end[0] ? found.end[1] + 1 : node.nodeValue.length;
      if (end <= start) return;
      var middle = node.splitText(start);
      middle.splitText(end - start);
      var m = document.createElement("mark");
      m.className = "ps-mark";
      m.dataset.thread = threadId;
      middle.parentNode.insertBefore(m, middle);
      m.appendChild(middle);
    });
  }

  /* The top-level block of the article that holds ``node``: a thread goes after it. */
  function block(node) {
    var root = article(), el = node.nodeType === 1 ? node : node.parentElement;
    while (el && el.parentElement && el.parentElement !== root) el = el.parentElement;
    return el && el.parentElement === root ? el : null;
  }

  function beside(target) {
    var after = target;
    var next = target.nextElementSibling;
    if (next && next.querySelector && next.querySelector("a.ps-csv")) after = next; // keep a table's CSV link with it
    next = after.nextElementSibling;
    if (next && next.classList.contains("ps-here")) return next;
    var box = document.createElement("div");
    box.className = "ps-here";
    after.parentNode.insertBefore(box, after.nextSibling);
    return box;
  }

  function place(thread) {
    var root = article();
    if (!root) return;
    var how = thread.dataset.place, target = null;
    if (thread.dataset.anchor) {
      var el = root.querySelector('[data-anchor="' + CSS.escape(thread.dataset.anchor) + '"]');
      if (el) {
        el.classList.add("ps-anchored");
        target = el.tagName === "TR" ? el.closest(".ps-table") : el.tagName === "SPAN" ? block(el) : el;
        if (target && target.parentElement !== root) target = block(target);
      }
    }
    if (!target && thread.dataset.find && (how === "quote" || how === "block" || how === "anchor")) {
      var found = findText(root, thread.dataset.find, thread.dataset.prefix, thread.dataset.suffix);
      if (found) {
        target = block(found.start[0]);
        if (thread.dataset.highlight) mark(found, thread.dataset.thread);
      }
    }
    if (target) beside(target).appendChild(thread);
  }

  function placeAll() {
    var p = panel();
    if (!p) return;
    Array.prototype.slice.call(p.querySelectorAll(".ps-thread")).forEach(place);
  }

  /* -- the review server ------------------------------------------------------------------ */
  var state = { page: null, version: null, lang: null, labels: {}, api: null, csrf: "", reviewer: null };

  function label(key) {
    return state.labels[key] || key;
  }

  function button(text, cls, onClick) {
    var b = document.createElement("button");
    b.type = "button";
    b.className = "md-button ps-button " + (cls || "");
    b.textContent = text;
    b.addEventListener("click", onClick);
    return b;
  }

  function request(method, url, body) {
    var headers = {};
    if (body) {
      headers["Content-Type"] = "application/json";
      headers["X-CSRF-Token"] = state.csrf;
    }
    return fetch(url, {
      method: method,
      headers: headers,
      credentials: "same-origin",
      body: body ? JSON.stringify(body) : undefined,
    }).then(function (r) {
      return r.json().then(function (data) {
        if (!r.ok) throw new Error(data && data.error ? data.error : r.status + " " + r.statusText);
        return data;
      });
    });
  }

  function stored(key, value) {
    try {
      if (value === undefined) return localStorage.getItem(key);
      if (value === null) localStorage.removeItem(key);
      else localStorage.setItem(key, value);
    } catch (e) { /* private mode: nothing kept */ }
    return null;
  }

  function author() {
    return state.reviewer !== null ? state.reviewer : stored("profsite-review-author") || "";
  }

  function draftKey(what) {
    return "profsite-draft|" + state.page + "|" + (state.version || "") + "|" + state.lang + "|" + what;
  }

  function fromHtml(html) {
    var t = document.createElement("template");
    t.innerHTML = html; // the server's rendering: escaped, markdown without raw HTML
    return t.content.firstElementChild;
  }

  function upsert(fresh) {
    var old = document.getElementById(fresh.id);
    if (old) {
      var keep = old.querySelector(".ps-form textarea");
      old.replaceWith(fresh);
      if (keep && keep.value) controls(fresh, keep.value); else controls(fresh);
    } else {
      panel().querySelector(".ps-review__threads").appendChild(fresh);
      place(fresh);
      controls(fresh);
    }
  }

  function showErrors(errors) {
    var p = panel(), box = document.querySelector(".ps-review-errors");
    if (!errors || !errors.length) {
      if (box) box.remove();
      return;
    }
    if (!box) {
      box = document.createElement("div");
      box.className = "ps-review-errors admonition failure";
      box.setAttribute("role", "alert");
      var bar = document.querySelector(".ps-review-bar");
      (bar || p).insertAdjacentElement("afterend", box);
    }
    box.textContent = "";
    var head = document.createElement("p");
    head.textContent = label("unreadable");
    box.appendChild(head);
    var list = document.createElement("ul");
    errors.forEach(function (e) {
      var li = document.createElement("li");
      var code = document.createElement("code");
      code.textContent = e;
      li.appendChild(code);
      list.appendChild(li);
    });
    box.appendChild(list);
  }

  /* The panel as the server renders it now: counts, and every thread (placed threads keep their place). */
  function refresh() {
    var url = "/api/panel?page=" + encodeURIComponent(state.page) + "&lang=" + encodeURIComponent(state.lang) +
      (state.version ? "&version=" + encodeURIComponent(state.version) : "");
    return request("GET", url).then(function (answer) {
      var fresh = fromHtml(answer.html), p = panel();
      var counts = fresh.querySelector(".ps-review__count-text");
      p.querySelector(".ps-review__count-text").textContent = counts.textContent;
      var barCounts = document.querySelector(".ps-review-bar__counts");
      if (barCounts) barCounts.textContent = counts.textContent;
      Array.prototype.slice.call(fresh.querySelectorAll(".ps-thread")).forEach(upsert);
      var empty = p.querySelector(".ps-review__empty");
      if (empty && document.querySelector(".ps-thread")) empty.remove();
      showErrors(answer.errors);
    });
  }

  function form(placeholder, key, send, onCancel, initial) {
    var box = document.createElement("form");
    box.className = "ps-form";
    var name = document.createElement("input");
    name.name = "author";
    name.placeholder = label("author");
    name.value = author();
    name.required = state.reviewer === null;
    name.addEventListener("input", function () {
      if (state.reviewer === null) stored("profsite-review-author", name.value);
    });
    if (state.reviewer !== null) {
      name.readOnly = true;
      name.hidden = true;
    }
    var text = document.createElement("textarea");
    text.name = "body";
    text.placeholder = placeholder;
    text.rows = 3;
    text.required = true;
    text.value = initial || stored(draftKey(key)) || "";
    text.addEventListener("input", function () {
      stored(draftKey(key), text.value ? text.value : null);
      if (onCancel && text.value) stored(draftKey("open"), JSON.stringify(composing));
    });
    var error = document.createElement("p");
    error.className = "ps-form__error";
    error.setAttribute("role", "alert");
    if (state.reviewer !== null) {
      var who = document.createElement("p");
      who.className = "ps-form__as";
      who.textContent = state.reviewer ? label("as") + " " + state.reviewer : label("login");
      box.appendChild(who);
    }
    box.appendChild(name);
    box.appendChild(text);
    var row = document.createElement("div");
    row.className = "ps-form__buttons";
    var submit = button(label("send"), "md-button--primary ps-send", function () {});
    submit.type = "submit";
    row.appendChild(submit);
    if (onCancel) row.appendChild(button(label("cancel"), "ps-cancel", onCancel));
    box.appendChild(row);
    box.appendChild(error);
    box.addEventListener("submit", function (event) {
      event.preventDefault();
      if (state.reviewer === null) stored("profsite-review-author", name.value);
      submit.disabled = true;
      send(name.value, text.value).then(function () {
        stored(draftKey(key), null);
        text.value = "";
        error.textContent = "";
      }).catch(function (e) {
        error.textContent = label("error") + " " + e.message;
      }).then(function () { submit.disabled = false; });
    });
    return box;
  }

  function controls(thread, draft) {
    if (thread.querySelector(".ps-thread__controls")) return;
    var id = thread.dataset.thread, bar = document.createElement("div");
    bar.className = "ps-thread__controls";
    var status = thread.dataset.status;
    function setStatus(s) {
      return function () {
        request("PATCH", state.api + "/" + id, { status: s, lang: state.lang, author: author() })
          .then(refresh)
          .catch(function (e) { showErrors([label("error") + " " + e.message]); });
      };
    }
    if (status === "open") {
      bar.appendChild(button(label("resolve"), "ps-resolve", setStatus("resolved")));
      bar.appendChild(button(label("wontfix"), "ps-wontfix", setStatus("wontfix")));
    } else {
      bar.appendChild(button(label("reopen"), "ps-reopen", setStatus("open")));
    }
    thread.appendChild(bar);
    thread.appendChild(form(label("reply"), "reply:" + id, function (name, body) {
      return request("POST", state.api + "/" + id + "/comments", { author: name, body: body, lang: state.lang })
        .then(refresh);
    }, null, draft));
  }

  var composer = null, composing = null;

  function closeComposer() {
    if (composer) composer.remove();
    composer = null;
    if (composing) stored(draftKey("open"), null);
    composing = null;
  }

  function targetKey(target) {
    return "new:" + (target.anchor || "") + ":" + (target.quote ? target.quote.exact : "");
  }

  function compose(target, description) {
    if (composer) composer.remove();
    composing = { target: target, description: description };
    var key = targetKey(target);
    composer = document.createElement("div");
    composer.className = "ps-composer";
    composer.setAttribute("role", "dialog");
    var what = document.createElement("p");
    what.className = "ps-composer__target";
    what.textContent = label("target") + " " + description;
    composer.appendChild(what);
    var f = form(label("body"), key, function (name, body) {
      var data = { page: state.page, lang: state.lang, version: state.version, body: body, author: name };
      if (target.anchor) data.anchor = target.anchor;
      if (target.quote) data.quote = target.quote;
      return request("POST", state.api, data).then(function (answer) {
        stored(draftKey(key), null);
        closeComposer();
        return refresh().then(function () {
          var el = document.getElementById("thread-" + answer.id);
          if (el) el.scrollIntoView({ block: "nearest" });
        });
      });
    }, closeComposer);
    composer.appendChild(f);
    var note = document.createElement("p");
    note.className = "ps-composer__draft";
    note.textContent = label("draft");
    composer.appendChild(note);
    document.body.appendChild(composer);
    if (f.querySelector("textarea").value) stored(draftKey("open"), JSON.stringify(composing));
    var name = composer.querySelector("input");
    (name.value || name.hidden ? composer.querySelector("textarea") : name).focus();
  }

  function cleanText(range) {
    var copy = range.cloneContents();
    Array.prototype.slice.call(copy.querySelectorAll(SKIP)).forEach(function (el) { el.remove(); });
    return (copy.textContent || "").replace(/\s+/g, " ");
  }

  function selectionTarget() {
    var sel = window.getSelection(), root = article();
    if (!sel || sel.isCollapsed || !sel.rangeCount || !root) return null;
    var range = sel.getRangeAt(0);
    if (!root.contains(range.commonAncestorContainer)) return null;
    var start = range.startContainer.nodeType === 1 ? range.startContainer : range.startContainer.parentElement;
    if (start.closest(SKIP)) return null;
    var exact = cleanText(range).trim();
    if (!exact) return null;
    var before = document.createRange();
    before.setStart(root, 0);
    before.setEnd(range.startContainer, range.startOffset);
    var after = document.createRange();
    after.setStart(range.endContainer, range.endOffset);
    after.setEnd(root, root.childNodes.length);
    var anchored = start.closest("[data-anchor]");
    return {
      quote: { exact: exact, prefix: cleanText(before).slice(-32), suffix: cleanText(after).slice(0, 32) },
      anchor: anchored ? anchored.dataset.anchor : null,
      text: exact,
    };
  }

  var selectButton = null;

  function onSelection() {
    var target = selectionTarget();
    if (selectButton) selectButton.remove();
    selectButton = null;
    if (!target) return;
    var rect = window.getSelection().getRangeAt(0).getBoundingClientRect();
    selectButton = button(label("comment_selection"), "ps-select-button", function () {
      selectButton.remove();
      selectButton = null;
      compose(target, "“" + (target.text.length > 80 ? target.text.slice(0, 79) + "…" : target.text) + "”");
    });
    selectButton.style.top = window.scrollY + rect.bottom + 6 + "px";
    selectButton.style.left = window.scrollX + rect.left + "px";
    document.body.appendChild(selectButton);
  }

  function clip(text) {
    text = (text || "").replace(/\s+/g, " ").trim();
    return text.length > 80 ? text.slice(0, 79) + "…" : text;
  }

  /* A row: "table “Top kernels”, row “cuBLASLt · GEMM …”" - the table's heading and the row's text cells. */
  function describeRow(row) {
    var table = row.closest(".ps-table"), heading = "";
    for (var el = table; el && !heading; el = el.previousElementSibling) {
      if (/^H[1-6]$/.test(el.tagName)) heading = el.textContent.replace(/¶/g, "");
    }
    var cells = Array.prototype.slice.call(row.querySelectorAll("td.ps-left")).slice(0, 2)
      .map(function (c) { return c.textContent.replace(/\s+/g, " ").trim(); });
    if (!cells.length) cells = [row.cells.length ? row.cells[0].textContent : ""];
    return label("table") + " “" + clip(heading) + "”, " + label("row") + " “" + clip(cells.join(" · ")) + "”";
  }

  function describe(el) {
    return clip((el.tagName === "FIGURE" ? (el.querySelector("figcaption") || el) : el).textContent);
  }

  var rowButton = null, rowTarget = null;

  function onRowHover(event) {
    var row = event.target.closest && event.target.closest("tbody tr[data-anchor]");
    if (!row || row === rowTarget) return;
    rowTarget = row;
    var rect = row.getBoundingClientRect();
    rowButton.style.top = window.scrollY + rect.top + "px";
    rowButton.style.left = window.scrollX + Math.min(rect.right, document.documentElement.clientWidth - 40) + "px";
    rowButton.hidden = false;
  }

  function bar(p) {
    var top = document.createElement("div");
    top.className = "ps-review-bar";
    top.setAttribute("role", "region");
    top.setAttribute("aria-label", label("bar"));
    var title = document.createElement("strong");
    title.textContent = label("bar");
    var counts = document.createElement("span");
    counts.className = "ps-review-bar__counts";
    counts.textContent = p.querySelector(".ps-review__count-text").textContent;
    var dash = p.querySelector(".ps-review__dashboard").cloneNode(true);
    dash.className = "ps-review-bar__dashboard";
    var how = document.createElement("span");
    how.className = "ps-review-bar__how";
    how.textContent = label("review_mode");
    [title, counts, dash, how].forEach(function (el, i) {
      if (i) top.appendChild(document.createTextNode(" · "));
      top.appendChild(el);
    });
    if (state.reviewer !== null) {
      var who = document.createElement("span");
      who.className = "ps-review-bar__who";
      who.textContent = state.reviewer ? label("as") + " " + state.reviewer : label("login");
      top.appendChild(document.createTextNode(" · "));
      top.appendChild(who);
    }
    var root = article();
    root.insertBefore(top, root.firstChild);
  }

  function enable(p) {
    p.classList.add("ps-review--live");
    document.documentElement.classList.add("ps-review-mode");
    bar(p);
    var how = p.querySelector(".ps-review__how");
    if (how) how.remove();
    p.insertBefore(button(label("comment_page"), "ps-comment-page", function () {
      compose({}, document.title);
    }), p.querySelector(".ps-review__threads"));
    Array.prototype.slice.call(document.querySelectorAll(".ps-thread")).forEach(function (t) { controls(t); });
    var root = article();
    root.addEventListener("mouseup", function (event) {
      if (event.target.closest(".ps-composer, .ps-select-button")) return;
      window.setTimeout(onSelection, 0);
    });
    rowButton = button(label("comment_row"), "ps-row-button", function () {
      if (rowTarget) compose({ anchor: rowTarget.dataset.anchor }, describeRow(rowTarget));
    });
    rowButton.hidden = true;
    rowButton.title = label("comment_row");
    document.body.appendChild(rowButton);
    root.addEventListener("mouseover", onRowHover);
    Array.prototype.slice.call(root.querySelectorAll("figure[data-anchor]")).forEach(function (fig) {
      var b = button(label("comment_piece"), "ps-comment-figure", function (event) {
        event.stopPropagation();
        compose({ anchor: fig.dataset.anchor }, describe(fig));
      });
      fig.appendChild(b);
    });
    var open = stored(draftKey("open"));
    if (open) {
      try {
        var was = JSON.parse(open);
        compose(was.target, was.description);
      } catch (e) { stored(draftKey("open"), null); }
    }
    document.addEventListener("visibilitychange", function () {
      if (document.visibilityState === "visible") refresh().catch(function () {});
    });
  }

  function dashboardLive(api) {
    var root = document.querySelector(".ps-dashboard-root");
    if (!root) return;
    function load() {
      request("GET", "/api/dashboard?lang=" + encodeURIComponent(root.dataset.lang)).then(function (answer) {
        var t = document.createElement("template");
        t.innerHTML = answer.html; // the server's rendering, escaped as at build time
        var fresh = t.content.querySelector(".ps-dashboard-root");
        if (fresh) root.replaceChildren.apply(root, Array.prototype.slice.call(fresh.childNodes));
        root.dataset.live = "1";
      }).catch(function () { /* the built dashboard stays */ });
    }
    load();
    document.addEventListener("visibilitychange", function () {
      if (document.visibilityState === "visible") load();
    });
  }

  function probe() {
    var api = document.querySelector('meta[name="profsite-review-api"]');
    if (!api) return; // not under the review server: read-only
    state.api = api.content;
    var csrf = document.querySelector('meta[name="profsite-csrf"]');
    state.csrf = csrf ? csrf.content : "";
    var who = document.querySelector('meta[name="profsite-reviewer"]');
    state.reviewer = who ? who.content : null;
    dashboardLive(api);
    var p = panel();
    if (!p) return;
    state.page = p.dataset.page;
    state.version = p.dataset.version || null;
    state.lang = p.dataset.lang;
    try { state.labels = JSON.parse(p.dataset.labels); } catch (e) { state.labels = {}; }
    enable(p);
    refresh().catch(function (e) { showErrors([label("error") + " " + e.message]); });
  }

  function start() {
    placeAll();
    probe();
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
