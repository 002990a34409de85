// Load shedding: with every worker busy and the wait queue full, a request
// gets 503 with Retry-After in Qdrant's error shape, at once; within
// capacity nothing is shed. Workers are held by connections that send half
// a request (the server waits for the rest), which is deterministic where
// slow searches would not be.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import net from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startServer, stopServer } from './serve_helpers.js';

let dir;
let server;

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'strata-serve-shed-'));
  // One worker, three waiting: pairs of requests fit with room for
  // connections the server is still closing when the next pair arrives.
  server = await startServer(['--data', dir, '--threads', '1', '--max-queue', '3']);
  assert.ok(!server.failed, 'strata serve did not start: ' + server.stderr());
});

after(async () => {
  if (server) assert.equal(await stopServer(server), 0, 'SIGTERM exits 0');
  rmSync(dir, { recursive: true, force: true });
});

// One request on its own connection (no keep-alive), so that each request
// goes through the server's queue.
function request(method, path, body) {
  return new Promise((resolve, reject) => {
    const data = body === undefined ? undefined : JSON.stringify(body);
    const req = http.request({ host: '127.0.0.1', port: server.port, method, path, agent: false,
                               headers: { 'content-type': 'application/json', connection: 'close' } }, (res) => {
      let text = '';
      res.on('data', (d) => { text += d; });
      res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, text }));
    });
    req.on('error', reject);
    req.end(data);
  });
}

// A connection that sends half a request and holds a worker (or a queue
// slot) until closed.
async function halfRequest() {
  const sock = net.connect(server.port, '127.0.0.1');
  await new Promise((resolve, reject) => { sock.on('connect', resolve); sock.on('error', reject); });
  sock.write('GET /collections HTTP/1.1\r\nHost: x\r\n');
  sock.on('error', () => {});
  return sock;
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

test('within capacity: sequential and pairwise requests are never shed', async () => {
  assert.equal((await request('PUT', '/collections/s', { vectors: { size: 4, distance: 'Dot' } })).status, 200);
  const points = Array.from({ length: 50 }, (_, i) => ({ id: i, vector: [i, 1, 0, 0] }));
  assert.equal((await request('PUT', '/collections/s/points?wait=true', { points })).status, 200);
  for (let i = 0; i < 30; ++i) {
    const r = await request('POST', '/collections/s/points/search', { vector: [1, 0, 0, 0], limit: 3 });
    assert.equal(r.status, 200, r.text);
  }
  for (let i = 0; i < 10; ++i) {
    // Two at a time: one on the worker, one in the queue.
    await sleep(20);
    const rs = await Promise.all([0, 1].map(() => request('POST', '/collections/s/points/search',
                                                          { vector: [1, 0, 0, 0], limit: 3 })));
    for (const r of rs) assert.equal(r.status, 200, r.text);
  }
});

test('worker and queue full: 503 with Retry-After, counted in /metrics; then recovers', async () => {
  const held = [await halfRequest()];
  await sleep(200);  // the worker has taken it
  for (let i = 0; i < 3; ++i) held.push(await halfRequest());
  await sleep(200);  // they wait in the queue
  const t0 = Date.now();
  const r = await request('POST', '/collections/s/points/search', { vector: [1, 0, 0, 0], limit: 3 });
  assert.ok(Date.now() - t0 < 2000, 'shed at once, not after a wait');
  assert.equal(r.status, 503);
  assert.equal(r.headers['retry-after'], '1');
  const body = JSON.parse(r.text);
  assert.match(body.status.error, /overloaded/);
  assert.equal(typeof body.time, 'number');
  // Probes still answer while shedding.
  assert.equal((await request('GET', '/healthz')).status, 200);
  for (const s of held) s.destroy();
  // Recovered: the next requests are served.
  let ok = false;
  for (let i = 0; i < 50 && !ok; ++i) {
    ok = (await request('POST', '/collections/s/points/search', { vector: [1, 0, 0, 0], limit: 3 })).status === 200;
    if (!ok) await sleep(100);
  }
  assert.ok(ok, 'served again after the held connections closed');
  const metrics = (await request('GET', '/metrics')).text;
  const shed = Number(metrics.match(/^strata_requests_shed_total (\d+)$/m)[1]);
  assert.ok(shed >= 1, metrics);
  assert.match(metrics, /strata_request_duration_seconds_bucket\{endpoint="POST \/collections\/\{name\}\/points\/search",le="\+Inf"\} \d+/);
  assert.match(metrics, /strata_request_duration_seconds_count\{endpoint="POST \/collections\/\{name\}\/points\/search"\} \d+/);
});
