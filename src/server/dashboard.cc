// The /dashboard page (see dashboard.h). Charts are drawn on <canvas> from
// successive polls of /metrics: QPS from the request counters, latency
// quantiles from the deltas of the duration histogram's buckets.
#include "server/dashboard.h"

namespace strata::server {
namespace {

constexpr std::string_view kPage = R"HTML(<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Strata console</title>
<style>
body{font:14px system-ui,sans-serif;margin:0;background:#f5f6f8;color:#1d2430}
header{background:#1d2430;color:#fff;padding:10px 20px;display:flex;gap:16px;align-items:center}
header h1{font-size:18px;margin:0;flex:1}
header input{width:220px}
main{padding:16px 20px;display:grid;grid-template-columns:1fr 1fr;gap:16px}
section{background:#fff;border:1px solid #dde1e7;border-radius:6px;padding:12px 14px}
section.wide{grid-column:1/3}
h2{font-size:15px;margin:0 0 8px}
table{border-collapse:collapse;width:100%}
th,td{text-align:left;padding:4px 8px;border-bottom:1px solid #eceff3;vertical-align:top}
th{font-weight:600;color:#555}
td.num{text-align:right;font-variant-numeric:tabular-nums}
td.payload{font-family:ui-monospace,monospace;font-size:12px;word-break:break-all}
input,select,button,textarea{font:inherit;padding:4px 6px}
textarea{width:100%;box-sizing:border-box;height:48px;font-family:ui-monospace,monospace;font-size:12px}
.row{display:flex;gap:8px;align-items:center;margin-bottom:8px}
.err{color:#b00020;min-height:1em}
canvas{width:100%;height:160px;display:block}
.legend span{margin-right:12px}
a{color:#1a5fb4;cursor:pointer}
</style></head>
<body>
<header><h1>Strata console</h1>
<label>API key <input id="key" type="password" placeholder="(none)" autocomplete="off"></label>
<button id="savekey">Use key</button></header>
<main>
<section class="wide"><h2>Collections</h2><div id="colerr" class="err"></div>
<table id="collections"><thead><tr><th>Name</th><th>Points</th><th>Indexed</th><th>Pending</th>
<th>Index</th><th>Dim</th><th>Distance</th><th>RAM</th><th>Disk</th></tr></thead><tbody></tbody></table></section>
<section class="wide"><h2>Search</h2>
<div class="row"><select id="col"></select>
<label>limit <input id="limit" type="number" value="10" min="1" max="1000" style="width:70px"></label>
<button id="go">Search</button></div>
<textarea id="q" placeholder="a point id (e.g. 42 or a UUID), or a vector as JSON: [0.1, 0.2, ...]"></textarea>
<div id="searcherr" class="err"></div><div id="searchinfo"></div>
<table id="results"><thead><tr><th>#</th><th>Id</th><th>Score</th><th>Payload</th></tr></thead><tbody></tbody></table></section>
<section><h2>Requests per second</h2><canvas id="qps" width="600" height="160"></canvas>
<div class="legend" id="qpslegend"></div></section>
<section><h2>Latency (search + query)</h2><canvas id="lat" width="600" height="160"></canvas>
<div class="legend" id="latlegend"></div></section>
</main>
<script>
'use strict';
const $ = (id) => document.getElementById(id);
const params = new URLSearchParams(location.search);
const frag = new URLSearchParams(location.hash.slice(1));
let apiKey = frag.get('key') || sessionStorage.getItem('strata-api-key') || '';
$('key').value = apiKey;
$('savekey').onclick = () => { apiKey = $('key').value.trim(); sessionStorage.setItem('strata-api-key', apiKey); refresh(); };

async function api(method, path, body) {
  const headers = { 'content-type': 'application/json' };
  if (apiKey) headers['api-key'] = apiKey;
  const r = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await r.text();
  if (!r.ok) {
    let msg = text;
    try { msg = JSON.parse(text).status.error; } catch (e) { /* not JSON */ }
    if (r.status === 401 || r.status === 403) msg = 'API key required or wrong: enter it above (' + msg + ')';
    throw new Error(r.status + ': ' + msg);
  }
  return path === '/metrics' ? text : JSON.parse(text).result;
}
const bytes = (n) => { const u = ['B', 'KiB', 'MiB', 'GiB', 'TiB']; let i = 0;
  while (n >= 1024 && i < u.length - 1) { n /= 1024; ++i; } return (i ? n.toFixed(1) : n) + ' ' + u[i]; };
const cell = (tr, text, cls) => { const td = document.createElement('td'); td.textContent = text;
  if (cls) td.className = cls; tr.appendChild(td); return td; };

async function loadCollections() {
  const body = $('collections').tBodies[0];
  try {
    const list = (await api('GET', '/collections')).collections.map((c) => c.name).sort();
    const infos = await Promise.all(list.map((n) => api('GET', '/collections/' + encodeURIComponent(n))));
    body.textContent = '';
    const sel = $('col'), keep = sel.value || params.get('collection');
    sel.textContent = '';
    list.forEach((n, i) => {
      const c = infos[i], s = c.config.strata || {}, v = c.config.params.vectors;
      const tr = document.createElement('tr');
      tr.dataset.name = n;
      const a = document.createElement('a'); a.textContent = n; a.onclick = () => { sel.value = n; };
      tr.appendChild(document.createElement('td')).appendChild(a);
      cell(tr, c.points_count, 'num'); cell(tr, c.indexed_vectors_count, 'num'); cell(tr, s.pending ?? '', 'num');
      cell(tr, s.index ?? ''); cell(tr, v.size, 'num'); cell(tr, v.distance);
      cell(tr, bytes(s.ram_bytes || 0), 'num'); cell(tr, bytes(s.disk_bytes || 0), 'num');
      body.appendChild(tr);
      const o = document.createElement('option'); o.value = o.textContent = n; sel.appendChild(o);
    });
    if (keep && list.includes(keep)) sel.value = keep;
    $('colerr').textContent = list.length ? '' : 'no collections';
  } catch (e) { $('colerr').textContent = e.message; }
}

function parseId(s) { return /^\d+$/.test(s) ? Number(s) : s; }

async function search() {
  const col = $('col').value, text = $('q').value.trim(), limit = Number($('limit').value) || 10;
  const body = $('results').tBodies[0];
  $('searcherr').textContent = ''; $('searchinfo').textContent = '';
  if (!col || !text) { $('searcherr').textContent = 'choose a collection and give an id or a vector'; return; }
  const base = '/collections/' + encodeURIComponent(col) + '/points';
  try {
    let vector, by;
    if (text.startsWith('[')) { vector = JSON.parse(text); by = 'vector of ' + vector.length + ' dimensions'; }
    else {
      const got = await api('POST', base, { ids: [parseId(text)], with_vector: true, with_payload: false });
      if (!got.length) throw new Error('no point with id ' + text);
      vector = got[0].vector; by = 'the vector of point ' + text;
    }
    const t0 = performance.now();
    const hits = await api('POST', base + '/search', { vector, limit, with_payload: true });
    $('searchinfo').textContent = hits.length + ' results for ' + by + ' in ' + (performance.now() - t0).toFixed(1) + ' ms';
    body.textContent = '';
    hits.forEach((h, i) => {
      const tr = document.createElement('tr'); tr.dataset.id = String(h.id);
      cell(tr, i + 1, 'num'); cell(tr, String(h.id)); cell(tr, h.score.toFixed(4), 'num');
      cell(tr, JSON.stringify(h.payload ?? null), 'payload');
      body.appendChild(tr);
    });
    document.body.dataset.searched = 'true';
  } catch (e) { $('searcherr').textContent = e.message; body.textContent = ''; }
}
$('go').onclick = search;

// /metrics polling: per-endpoint counters and histogram buckets.
const series = { t: [], qps: [], p50: [], p99: [], mean: [] };
const span = [];  // seconds between successive polls
let prev = null;
function parseMetrics(text) {
  const m = { total: 0, shed: 0, count: 0, sum: 0, uptime: null, buckets: new Map() };
  for (const line of text.split('\n')) {
    let r = line.match(/^strata_requests_total\{endpoint="([^"]*)"\} (\S+)/);
    if (r) { if (!r[1].endsWith('/metrics')) m.total += Number(r[2]); continue; }
    if ((r = line.match(/^strata_requests_shed_total (\S+)/))) { m.shed = Number(r[1]); continue; }
    if ((r = line.match(/^strata_uptime_seconds (\S+)/))) { m.uptime = Number(r[1]); continue; }
    r = line.match(/^strata_request_duration_seconds_(bucket|sum|count)\{endpoint="POST [^"]*\/points\/(search|query)(\/batch)?"(?:,le="([^"]*)")?\} (\S+)/);
    if (!r) continue;
    const v = Number(r[5]);
    if (r[1] === 'sum') m.sum += v; else if (r[1] === 'count') m.count += v;
    else { const le = r[4] === '+Inf' ? Infinity : Number(r[4]); m.buckets.set(le, (m.buckets.get(le) || 0) + v); }
  }
  return m;
}
function quantile(q, cur, old) {
  const les = [...cur.buckets.keys()].sort((a, b) => a - b);
  const total = cur.count - (old ? old.count : 0);
  if (total <= 0) return null;
  let lower = 0, below = 0;
  for (const le of les) {
    const c = cur.buckets.get(le) - (old && old.buckets.has(le) ? old.buckets.get(le) : 0);
    if (c >= q * total) {
      if (le === Infinity) return lower;
      return lower + (le - lower) * ((q * total - below) / Math.max(1, c - below));
    }
    lower = le; below = c;
  }
  return lower;
}
function draw(canvas, lines, unit) {
  const ctx = canvas.getContext('2d'), W = canvas.width, H = canvas.height, L = 50, B = 18;
  ctx.clearRect(0, 0, W, H);
  let max = 0;
  for (const l of lines) for (const v of l.data) if (v != null && v > max) max = v;
  max = max > 0 ? max * 1.15 : 1;
  ctx.strokeStyle = '#dde1e7'; ctx.fillStyle = '#666'; ctx.font = '11px sans-serif';
  for (let i = 0; i <= 4; ++i) {
    const y = (H - B) * (1 - i / 4) + 0.5;
    ctx.beginPath(); ctx.moveTo(L, y); ctx.lineTo(W, y); ctx.stroke();
    const v = max * i / 4;
    ctx.fillText((v >= 100 ? v.toFixed(0) : v.toPrecision(2)) + unit, 2, Math.max(10, y - 2));
  }
  ctx.fillText('last ' + Math.round(span.reduce((a, b) => a + b, 0)) + ' s', L, H - 4);
  const n = Math.max(2, MAX_POINTS);
  for (const l of lines) {
    ctx.strokeStyle = l.color; ctx.lineWidth = 2; ctx.beginPath();
    let started = false;
    l.data.forEach((v, i) => {
      if (v == null) { started = false; return; }
      const x = L + (W - L) * (i + MAX_POINTS - l.data.length) / (n - 1), y = (H - B) * (1 - v / max);
      if (started) ctx.lineTo(x, y); else { ctx.moveTo(x, y); started = true; }
    });
    ctx.stroke();
  }
}
const POLL_MS = Number(params.get('poll_ms')) || 2000, MAX_POINTS = 90;
async function poll() {
  try {
    const now = performance.now(), cur = parseMetrics(await api('GET', '/metrics'));
    if (prev) {
      // The server's clock when it gives one (steady under a slow or
      // throttled page), else the page's.
      const dt = cur.uptime != null && prev.m.uptime != null ? cur.uptime - prev.m.uptime : (now - prev.at) / 1000;
      const dn = cur.count - prev.m.count;
      span.push(dt);
      series.t.push(now);
      series.qps.push((cur.total - prev.m.total) / dt);
      series.p50.push(dn > 0 ? quantile(0.5, cur, prev.m) * 1000 : null);
      series.p99.push(dn > 0 ? quantile(0.99, cur, prev.m) * 1000 : null);
      series.mean.push(dn > 0 ? (cur.sum - prev.m.sum) / dn * 1000 : null);
      for (const k of Object.keys(series)) if (series[k].length > MAX_POINTS) series[k].shift();
      if (span.length > MAX_POINTS) span.shift();
      const last = (a) => a.length && a[a.length - 1] != null ? a[a.length - 1].toFixed(1) : '-';
      draw($('qps'), [{ data: series.qps, color: '#1a5fb4' }], '');
      $('qpslegend').innerHTML = '<span style="color:#1a5fb4">requests/s ' + last(series.qps) +
        '</span><span>rejected (503) total ' + cur.shed + '</span>';
      draw($('lat'), [{ data: series.p50, color: '#26a269' }, { data: series.p99, color: '#c01c28' },
                      { data: series.mean, color: '#986a44' }], ' ms');
      $('latlegend').innerHTML = '<span style="color:#26a269">p50 ' + last(series.p50) + ' ms</span>' +
        '<span style="color:#c01c28">p99 ' + last(series.p99) + ' ms</span>' +
        '<span style="color:#986a44">mean ' + last(series.mean) + ' ms</span>';
    }
    prev = { at: now, m: cur };
  } catch (e) { $('latlegend').textContent = e.message; }
}

async function refresh() { await loadCollections(); await poll(); }
(async () => {
  await loadCollections();
  if (params.get('limit')) $('limit').value = params.get('limit');
  const q = params.get('id') ?? params.get('vector');
  if (params.get('collection') && q) { $('q').value = q; await search(); }
  await poll();
  setInterval(poll, POLL_MS);
  setInterval(loadCollections, 10000);
})();
</script></body></html>
)HTML";

}  // namespace

std::string_view DashboardHtml() { return kPage; }

}  // namespace strata::server
