// The UI's only script (served from the package; the CSP forbids inline script). It does three
// things: a quick filter that hides the findings on this page whose text does not contain the
// typed words; signing in (the token goes once, in a same-origin JSON body, and is never kept
// here); and the "needs you" page's decisions, each a same-origin JSON POST carrying the page's
// CSRF token in a header (the session itself is an HttpOnly cookie this script cannot read).
"use strict";

function rwPost(path, body) {
  var headers = {"Content-Type": "application/json"};
  var meta = document.querySelector('meta[name="rw-csrf"]');
  if (meta) { headers["X-RW-CSRF"] = meta.getAttribute("content"); }
  return fetch(path, {method: "POST", headers: headers, body: JSON.stringify(body),
                      credentials: "same-origin", cache: "no-store", redirect: "error"})
    .then(function (reply) {
      return reply.json().catch(function () { return {}; }).then(function (data) {
        return {status: reply.status, data: data};
      });
    });
}

function rwShow(where, answer) {
  where.classList.remove("ok", "refused");
  if (answer.status >= 200 && answer.status < 300) {
    where.classList.add("ok");
    where.textContent = answer.data.description || "done";
  } else {
    var error = answer.data.error || {};
    where.classList.add("refused");
    where.textContent = "Refused (" + answer.status + " " + (error.code || "error") + "): " + (error.message || "");
  }
}

function rwFilter() {
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
}

function rwSignIn() {
  var form = document.getElementById("sign-in");
  if (!form) { return; }
  form.addEventListener("submit", function (event) {
    event.preventDefault();
    var box = document.getElementById("token");
    var token = box.value;
    box.value = "";  // not left in the page
    var result = document.getElementById("sign-in-result");
    rwPost("/ui/session", {token: token}).then(function (answer) {
      if (answer.status === 200) {
        window.location.assign("/needs-you.html");
      } else {
        rwShow(result, answer);
      }
    });
  });
}

function rwSignOut() {
  var button = document.getElementById("sign-out");
  if (!button) { return; }
  button.addEventListener("click", function () {
    rwPost("/ui/sign-out", {}).then(function () { window.location.assign("/sign-in.html"); });
  });
}

function rwActions() {
  var result = document.getElementById("act-result");
  document.querySelectorAll(".act button.do").forEach(function (button) {
    button.addEventListener("click", function () {
      var box = button.closest(".act");
      var body = {action: button.getAttribute("data-action"),
                  reason: box.querySelector(".reason").value};
      if (box.dataset.object) { body.object_id = box.dataset.object; }
      if (box.dataset.commit) { body.commit = box.dataset.commit; }
      if (box.dataset.hypothesis) { body.hypothesis_id = box.dataset.hypothesis; }
      if (body.action === "verdict_set") {
        body.value = box.querySelector(".value").value;
        body.confidence = parseFloat(box.querySelector(".confidence").value);
      }
      button.disabled = true;
      rwPost("/ui/act/" + encodeURIComponent(box.dataset.project), body).then(function (answer) {
        rwShow(result, answer);
        if (answer.status === 401) { window.location.assign("/sign-in.html"); return; }
        button.disabled = false;
        if (answer.status === 200) { box.classList.add("done"); }
      });
    });
  });
}

document.addEventListener("DOMContentLoaded", function () {
  rwFilter();
  rwSignIn();
  rwSignOut();
  rwActions();
});
