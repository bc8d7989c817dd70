/* profsite review threads (generators/review): written by hand, no library, nothing loaded
 * from outside the site.
 *
 * 1. Every page: the threads the build wrote into the review panel (section#ps-review) are
 *    moved beside what they are about - a table row or table (after its table), a figure, a
 *    claim's paragraph, or the paragraph of a quoted text (which is marked) - following the
 *    place the build decided (data-place, data-anchor, data-find/-prefix/-suffix). A thread
 *    whose place is not on the page stays in the panel.
 * 2. Under the review server (`make review`, 127.0.0.1), which marks its pages with
 *    <meta name="profsite-review-api">, the page becomes writable: select text, or click a
 *    table row or a figure's comment button, write a comment; reply, resolve, reopen. Each answer of the API carries
 *    the thread's HTML (rendered and sanitised by the server, as at build time), which
 *    replaces or joins the page's threads without a reload. Anywhere else (an offline copy,
 *    a published site) the threads are read-only.
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
  var state = { page: null, version: null, lang: null, labels: {}, api: null };

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
    return fetch(url, {
      method: method,
      headers: body ? { "Content-Type": "application/json" } : {},
      body: body ? JSON.stringify(body) : undefined,
    }).then(function (r) {
      return r.json().then(function (data) {
        if (!r.ok) throw new Error(data && data.error ? data.error : r.status + " " + r.statusText);
        return data;
      });
    });
  }

  function author() {
    try { return localStorage.getItem("profsite-review-author") || ""; } catch (e) { return ""; }
  }

  function remember(name) {
    try { localStorage.setItem("profsite-review-author", name); } catch (e) { /* private mode */ }
  }

  function fromHtml(html) {
    var t = document.createElement("template");
    t.innerHTML = html; // the server's rendering: escaped, markdown without raw HTML
    return t.content.firstElementChild;
  }

  function upsert(data) {
    var fresh = fromHtml(data.html);
    var old = document.getElementById("thread-" + data.id);
    if (old) {
      ["place", "anchor", "find", "prefix", "suffix", "highlight"].forEach(function (k) {
        if (old.dataset[k] !== undefined) fresh.dataset[k] = old.dataset[k];
      });
      old.replaceWith(fresh);
    } else if ((data.version || null) === state.version) {
      panel().querySelector(".ps-review__threads").appendChild(fresh);
      place(fresh);
    } else {
      return;
    }
    controls(fresh);
    var empty = panel().querySelector(".ps-review__empty");
    if (empty) empty.remove();
  }

  function refresh() {
    var url = state.api + "?page=" + encodeURIComponent(state.page) + "&lang=" + encodeURIComponent(state.lang);
    return request("GET", url).then(function (threads) { threads.forEach(upsert); });
  }

  function form(placeholder, send, onCancel) {
    var box = document.createElement("form");
    box.className = "ps-form";
    var name = document.createElement("input");
    name.name = "author";
    name.placeholder = label("author");
    name.value = author();
    name.required = true;
    var text = document.createElement("textarea");
    text.name = "body";
    text.placeholder = placeholder;
    text.rows = 3;
    text.required = true;
    var error = document.createElement("p");
    error.className = "ps-form__error";
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
      remember(name.value);
      submit.disabled = true;
      send(name.value, text.value).then(function () {
        text.value = "";
        error.textContent = "";
      }).catch(function (e) {
        error.textContent = label("error") + " " + e.message;
      }).then(function () { submit.disabled = false; });
    });
    return box;
  }

  function controls(thread) {
    if (thread.querySelector(".ps-thread__controls")) return;
    var id = thread.dataset.thread, bar = document.createElement("div");
    bar.className = "ps-thread__controls";
    var status = thread.dataset.status;
    function setStatus(s) {
      return function () {
        request("PATCH", state.api + "/" + id, { status: s, lang: state.lang }).then(upsertOne);
      };
    }
    if (status === "open") {
      bar.appendChild(button(label("resolve"), "ps-resolve", setStatus("resolved")));
      bar.appendChild(button(label("wontfix"), "ps-wontfix", setStatus("wontfix")));
    } else {
      bar.appendChild(button(label("reopen"), "ps-reopen", setStatus("open")));
    }
    thread.appendChild(bar);
    thread.appendChild(form(label("reply"), function (name, body) {
      return request("POST", state.api + "/" + id + "/comments", { author: name, body: body, lang: state.lang })
        .then(upsertOne);
    }));
  }

  function upsertOne(answer) {
    upsert(answer.thread);
  }

  var composer = null;

  function closeComposer() {
    if (composer) composer.remove();
    composer = null;
  }

  function compose(target, description) {
    closeComposer();
    composer = document.createElement("div");
    composer.className = "ps-composer";
    composer.setAttribute("role", "dialog");
    var what = document.createElement("p");
    what.className = "ps-composer__target";
    what.textContent = label("target") + " " + description;
    composer.appendChild(what);
    composer.appendChild(form(label("body"), function (name, body) {
      var data = { page: state.page, lang: state.lang, version: state.version, body: body, author: name };
      if (target.anchor) data.anchor = target.anchor;
      if (target.quote) data.quote = target.quote;
      return request("POST", state.api, data).then(function (answer) {
        upsert(answer.thread);
        closeComposer();
        var el = document.getElementById("thread-" + answer.id);
        if (el) el.scrollIntoView({ block: "nearest" });
      });
    }, closeComposer));
    document.body.appendChild(composer);
    composer.querySelector(composer.querySelector("input").value ? "textarea" : "input").focus();
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

  function describe(el) {
    var text = (el.tagName === "FIGURE" ? (el.querySelector("figcaption") || el) : el).textContent || "";
    text = text.replace(/\s+/g, " ").trim();
    return text.length > 80 ? text.slice(0, 79) + "…" : text;
  }

  function enable(p) {
    p.classList.add("ps-review--live");
    var note = document.createElement("p");
    note.className = "ps-review__live";
    note.textContent = label("review_mode");
    p.insertBefore(note, p.querySelector(".ps-review__threads"));
    p.insertBefore(button(label("comment_page"), "ps-comment-page", function () {
      compose({}, document.title);
    }), p.querySelector(".ps-review__threads"));
    Array.prototype.slice.call(document.querySelectorAll(".ps-thread")).forEach(controls);
    var root = article();
    root.addEventListener("mouseup", function (event) {
      if (event.target.closest(".ps-composer, .ps-select-button")) return;
      window.setTimeout(onSelection, 0);
    });
    root.addEventListener("click", function (event) {
      var row = event.target.closest("tbody tr[data-anchor]");
      if (!row || event.target.closest("a, button, " + SKIP)) return;
      var sel = window.getSelection();
      if (sel && !sel.isCollapsed) return; // a selection, not a click
      compose({ anchor: row.dataset.anchor }, describe(row));
    });
    Array.prototype.slice.call(root.querySelectorAll("figure[data-anchor]")).forEach(function (fig) {
      var b = button(label("comment_piece"), "ps-comment-figure", function (event) {
        event.stopPropagation();
        compose({ anchor: fig.dataset.anchor }, describe(fig));
      });
      fig.appendChild(b);
    });
  }

  function probe() {
    var p = panel(), api = document.querySelector('meta[name="profsite-review-api"]');
    if (!p || !api) return; // not under the review server: read-only
    state.api = api.content;
    state.page = p.dataset.page;
    state.version = p.dataset.version || null;
    state.lang = p.dataset.lang;
    try { state.labels = JSON.parse(p.dataset.labels); } catch (e) { state.labels = {}; }
    var url = state.api + "?page=" + encodeURIComponent(state.page) + "&lang=" + encodeURIComponent(state.lang);
    fetch(url).then(function (r) {
      if (!r.ok) return null;
      return r.json();
    }).then(function (threads) {
      if (!Array.isArray(threads)) return;
      enable(p);
      threads.forEach(upsert);
    }).catch(function () { /* no review server: read-only */ });
  }

  function start() {
    placeAll();
    probe();
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
