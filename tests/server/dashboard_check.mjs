// /dashboard in headless Chromium: `strata serve` with an API key and a
// small collection; the page, given the key in its URL fragment and a
// search in its query, must list the collection and show the search's
// results (ids in the dumped DOM). Also: the page itself is served without
// the key and carries no data. Exit 77 (skip) without chromium.
// usage: node dashboard_check.mjs  (STRATA_BIN; DASHBOARD_SCREENSHOT=PATH
// also saves a screenshot taken under search traffic)
import assert from 'node:assert/strict';
import { execFile, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startServer, stopServer } from './serve_helpers.js';

function findChromium() {
  for (const name of [process.env.CHROMIUM, 'chromium', 'chromium-browser', 'google-chrome']) {
    if (name && spawnSync('sh', ['-c', `command -v ${name}`]).status === 0) return name;
  }
  return null;
}

const chromium = findChromium();
if (!chromium) {
  console.error('SKIP: chromium is not installed (scripts/install_deps.sh installs it)');
  process.exit(77);
}

function runChromium(args) {
  return new Promise((resolve, reject) => {
    execFile(chromium, ['--headless', '--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage',
                        '--no-first-run', '--user-data-dir=' + join(dir, 'profile'), ...args],
             { timeout: 120000, maxBuffer: 16 << 20 }, (err, stdout, stderr) => {
               if (err) reject(new Error(`chromium failed: ${err.message}\n${stderr}`));
               else resolve(stdout);
             });
  });
}

const KEY = 'dash-key';
const DIM = 8;
const N = 300;
const dir = mkdtempSync(join(tmpdir(), 'strata-dashboard-'));
writeFileSync(join(dir, 'key'), KEY + '\n');
const server = await startServer(['--data', join(dir, 'data'), '--api-key-file', join(dir, 'key')]);
let failed = false;
try {
  assert.ok(!server.failed, 'strata serve did not start: ' + server.stderr());
  const api = async (method, path, body) => {
    const r = await fetch(server.url + path, { method, headers: { 'content-type': 'application/json', 'api-key': KEY },
                                               body: body === undefined ? undefined : JSON.stringify(body) });
    assert.ok(r.ok, `${method} ${path}: ${r.status} ${await r.clone().text()}`);
    return (await r.json()).result;
  };
  await api('PUT', '/collections/demo', { vectors: { size: DIM, distance: 'Cosine' } });
  // Points on a circle in the first two dimensions: the neighbours of point
  // i are i, i±1, i±2, ... (a known answer for the page's search).
  const vec = (i) => { const a = (2 * Math.PI * i) / N; const v = new Array(DIM).fill(0.01); v[0] = Math.cos(a); v[1] = Math.sin(a); return v; };
  const points = Array.from({ length: N }, (_, i) => ({ id: i, vector: vec(i), payload: { name: `point-${i}`, group: ['a', 'b', 'c'][i % 3] } }));
  await api('PUT', '/collections/demo/points?wait=true', { points });

  // The page without a key: served, holds no data; the API wants the key.
  const page = await fetch(server.url + '/dashboard');
  assert.equal(page.status, 200);
  assert.match(page.headers.get('content-type'), /text\/html/);
  const html = await page.text();
  assert.ok(!html.includes('demo') && !html.includes('point-'), 'the static page carries no data');
  assert.equal((await fetch(server.url + '/collections')).status, 401);

  // Search by id 17 on load: the best hits are 17, then 16/18.
  const url = `${server.url}/dashboard?collection=demo&id=17&limit=5#key=${KEY}`;
  const dom = await runChromium(['--virtual-time-budget=10000', '--dump-dom', url]);
  const rows = [...dom.matchAll(/<tr data-id="([^"]+)">/g)].map((m) => m[1]);
  assert.deepEqual(rows.slice(0, 1), ['17'], 'first result is the point itself:\n' + dom);
  assert.equal(rows.length, 5, 'five results');
  assert.deepEqual(new Set(rows.slice(1, 3)), new Set(['16', '18']));
  assert.match(dom, /point-17/, 'payloads are shown');
  assert.match(dom, /<tr data-name="demo"><td><a>demo<\/a><\/td><td class="num">300<\/td>/, 'collection row with its point count');

  // A pasted vector works too; without the key the page says so.
  const vurl = `${server.url}/dashboard?collection=demo&limit=3&vector=${encodeURIComponent(JSON.stringify(vec(100)))}#key=${KEY}`;
  const vdom = await runChromium(['--virtual-time-budget=10000', '--dump-dom', vurl]);
  assert.deepEqual([...vdom.matchAll(/<tr data-id="([^"]+)">/g)].map((m) => m[1])[0], '100');
  const nokey = await runChromium(['--virtual-time-budget=5000', '--dump-dom', `${server.url}/dashboard?collection=demo&id=1`]);
  assert.match(nokey, /API key required/);
  assert.ok(!/<tr data-id=/.test(nokey), 'no results without the key');

  if (process.env.DASHBOARD_SCREENSHOT) {
    // Search traffic in the background so the charts have something to show.
    let stop = false;
    const traffic = (async () => {
      let i = 0;
      while (!stop) {
        await api('POST', '/collections/demo/points/search', { vector: vec(i++ % N), limit: 10 });
        if (i % 20 === 0) await new Promise((r) => setTimeout(r, 5 + (i % 7) * 3));
      }
    })();
    await new Promise((r) => setTimeout(r, 1500));
    const surl = `${server.url}/dashboard?collection=demo&id=17&limit=5&poll_ms=500#key=${KEY}`;
    await runChromium(['--virtual-time-budget=20000', '--window-size=1200,1000', '--hide-scrollbars',
                       '--screenshot=' + process.env.DASHBOARD_SCREENSHOT, surl]);
    stop = true;
    await traffic;
    console.log(`screenshot: ${process.env.DASHBOARD_SCREENSHOT} (${statSync(process.env.DASHBOARD_SCREENSHOT).size} bytes)`);
  }
  console.log('dashboard: ok');
} catch (e) {
  failed = true;
  console.error(e);
} finally {
  const code = await stopServer(server);
  if (code !== 0) { failed = true; console.error('strata serve exited ' + code); }
  rmSync(dir, { recursive: true, force: true });
}
process.exit(failed ? 1 : 0);
