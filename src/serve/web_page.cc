#include "serve/web_page.h"

namespace kiln::serve {

namespace {

constexpr std::string_view kPage = R"KILNPAGE(<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>kiln serve</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>
body { font: 14px/1.4 system-ui, sans-serif; margin: 1.5em; color: #222; background: #fcfcfc; }
h1 { font-size: 20px; margin: 0 0 .3em; } h2 { font-size: 16px; margin: 1.4em 0 .4em; }
table { border-collapse: collapse; margin: .3em 0 1em; } td, th { border: 1px solid #ddd; padding: 3px 8px; text-align: left; vertical-align: top; }
th { background: #f0f0f0; } td.num { text-align: right; font-variant-numeric: tabular-nums; }
.state { font-weight: 600; padding: 0 5px; border-radius: 3px; }
.succeeded { background: #d8f0d8; } .failed { background: #f6d4d4; } .fell-back { background: #f6ecc8; }
.queued, .running { background: #dde6f6; }
#status { color: #666; } #errors { color: #a00; } code { font-size: 12px; }
a.report { margin-right: .6em; }
</style></head>
<body>
<h1>kiln serve</h1>
<form id="login"><label>Token <input id="token" type="password" size="40" autocomplete="off"></label>
<button type="submit">Show</button> <span id="status">a read token shows the registry (kiln token create)</span></form>
<div id="errors"></div>
<h2>Models</h2><div id="models"></div>
<h2>Compile jobs</h2><div id="jobs"></div>
<script>
"use strict";
const $ = (id) => document.getElementById(id);
window.addEventListener("error", (e) => { $("errors").textContent += "script error: " + e.message + " "; });
function el(tag, attrs, ...kids) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === "onclick") e.addEventListener("click", v); else e.setAttribute(k, v);
  }
  for (const k of kids) e.append(k instanceof Node ? k : document.createTextNode(k == null ? "" : String(k)));
  return e;
}
function table(head, rows) {
  const t = el("table", {}, el("tr", {}, ...head.map((h) => el("th", {}, h))));
  for (const r of rows) t.append(el("tr", {}, ...r.map((c) => c instanceof Node ? el("td", {}, c) :
    el("td", typeof c === "number" ? {class: "num"} : {}, c))));
  return t;
}
const num = (x, digits) => (typeof x === "number" ? x.toFixed(digits) : "-");
const when = (s) => (s ? new Date(s * 1000).toISOString().replace("T", " ").slice(0, 19) : "-");
let token = "";
let refresh = 0;
async function api(path) {
  const r = await fetch(path, {headers: {Authorization: "Bearer " + token}});
  const body = await r.json().catch(() => ({}));
  if (!r.ok) throw new Error(path + ": " + r.status + " " + (body.error || ""));
  return body;
}
// A report or a JSON record opened in a new tab: fetched with the token, shown from a blob.
async function open_with_token(path, type) {
  try {
    const r = await fetch(path, {headers: {Authorization: "Bearer " + token}});
    if (!r.ok) throw new Error(path + ": " + r.status);
    const blob = new Blob([await r.arrayBuffer()], {type: type});
    window.open(URL.createObjectURL(blob), "_blank");
  } catch (e) { $("errors").textContent = e.message; }
}
function link(text, path, type) {
  return el("a", {href: "#", class: "report", onclick: (ev) => { ev.preventDefault(); open_with_token(path, type); }}, text);
}
function target_rows(job) {
  return (job.targets || []).map((t) => {
    const m = t.measured || {};
    const acc = t.accuracy || {};
    let q = "";
    if (t.quantize) {  // the mode and the lowest cosine of an output against the float original
      const cos = ((t.quantize.accuracy || {}).outputs || []).filter((o) => o.compared).map((o) => o.cosine);
      q = (t.quantize.request || {}).mode + (cos.length ? " (cosine " + Math.min(...cos).toFixed(5) + ")" : "");
    }
    const why = t.error || (t.fallback && t.fallback.reason) || "";
    const links = el("span", {});
    if (t.artifact) links.append(link("artifact", "/v1/jobs/" + job.job + "/artifacts/" + t.target, "application/octet-stream"));
    return [t.target || "-", el("span", {class: "state " + (t.state || "")}, t.state || "-"),
            typeof t.compile_seconds === "number" ? Number(t.compile_seconds.toFixed(2)) : "-",
            typeof t.size_bytes === "number" ? Number((t.size_bytes / 1048576).toFixed(2)) : "-",
            typeof m.latency_p50_ms === "number" ? Number(m.latency_p50_ms.toFixed(3)) : "-",
            acc.outputs_match === undefined ? "-" : (acc.outputs_match ? "match" : "DIFFER"),
            q, t.cache_hit ? "hit" : "", why, links];
  });
}
async function show() {
  $("errors").textContent = "";
  $("status").textContent = "loading";
  try {
    const models = (await api("/v1/models")).models;
    const rows = [];
    for (const m of models) {
      const detail = await api("/v1/models/" + encodeURIComponent(m.name));
      const aliases = Object.entries(detail.aliases || {}).map(([a, v]) => a + " \u2192 " + v).join(", ");
      for (const v of m.versions)
        rows.push([m.name, v.version, el("code", {}, v.sha256.slice(0, 16)), v.bytes, when(v.created), aliases]);
    }
    $("models").replaceChildren(rows.length ? table(["model", "version", "sha256", "bytes", "uploaded", "aliases"], rows)
                                            : el("p", {}, "no models yet"));
    const jobs = (await api("/v1/jobs?limit=50")).jobs;
    const box = el("div", {});
    for (const j of jobs) {
      const reports = el("span", {}, link("job JSON", "/v1/jobs/" + j.job, "application/json"));
      for (const [name, path] of Object.entries(j.reports || {})) reports.append(link(name + " report", path, "text/html"));
      box.append(el("h3", {id: "job-" + j.job}, "job " + j.job + " \u00b7 " + j.model + " v" + j.version + " \u00b7 ",
                    el("span", {class: "state " + j.state}, j.state), " \u00b7 " + when(j.created) + " ", reports));
      box.append(table(["target", "state", "compile s", "MB", "p50 ms", "outputs", "quantized", "cache", "note", ""],
                       target_rows(j)));
    }
    $("jobs").replaceChildren(jobs.length ? box : el("p", {}, "no jobs yet"));
    const busy = jobs.filter((j) => j.state === "queued" || j.state === "running").length;
    $("status").textContent = models.length + " models, " + jobs.length + " recent jobs" +
                              (busy ? ", " + busy + " not done (refreshing)" : "");
    clearTimeout(refresh);
    if (busy) refresh = setTimeout(show, 2000);  // until every job shown is done
  } catch (e) {
    $("status").textContent = "";
    $("errors").textContent = e.message;
  }
}
$("login").addEventListener("submit", (ev) => {
  ev.preventDefault();
  token = $("token").value.trim();
  sessionStorage.setItem("kiln-token", token);
  show();
});
const from_hash = new URLSearchParams(location.hash.slice(1)).get("token");
if (from_hash) { sessionStorage.setItem("kiln-token", from_hash); history.replaceState(null, "", location.pathname); }
token = from_hash || sessionStorage.getItem("kiln-token") || "";
if (token) show();
</script>
</body></html>
)KILNPAGE";

}  // namespace

std::string_view web_page_html() { return kPage; }

}  // namespace kiln::serve
