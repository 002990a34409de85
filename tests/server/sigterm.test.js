// SIGTERM while a merge runs: the server abandons the merge (its input is
// durable), exits 0 within seconds, and after a restart every point is there
// and the merge runs again.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startServer, stopServer } from './serve_helpers.js';

const DIM = 32;
const N = 60000;
const B = 2000;

const call = async (s, method, path, body) => {
  const r = await fetch(s.url + path, { method, headers: { 'content-type': 'application/json' },
                                        body: body === undefined ? undefined : JSON.stringify(body) });
  return { status: r.status, body: await r.json() };
};
// Point i's vector: pseudo-random (mulberry32 seeded by i), multiples of
// 1/256 (exact in float32, so returned vectors compare equal).
const vec = (i) => {
  let seed = i + 1;
  const next = () => { seed = (seed + 0x6D2B79F5) | 0; let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t; return ((t ^ (t >>> 14)) >>> 0) / 4294967296; };
  return Array.from({ length: DIM }, () => (Math.floor(next() * 512) - 256) / 256);
};

test('SIGTERM during a merge exits 0 in seconds and loses nothing', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'strata-serve-sigterm-'));
  let s = await startServer(['--data', dir]);
  assert.ok(!s.failed, s.stderr());
  // One merge over all the points after the threshold build: a graph with a
  // large build list, so that it runs for many seconds.
  const created = await call(s, 'PUT', '/collections/m', {
    vectors: { size: DIM, distance: 'Euclid' },
    strata: { merge_pending_count: N - 2000, merge_pending_ratio: 0, graph: { L: 200 } } });
  assert.equal(created.status, 200, JSON.stringify(created.body));
  for (let start = 0; start < N; start += B) {
    const points = Array.from({ length: B }, (_, k) => ({ id: start + k, vector: vec(start + k), payload: { k: start + k } }));
    const r = await call(s, 'PUT', '/collections/m/points?wait=true', { points });
    assert.equal(r.status, 200, JSON.stringify(r.body));
  }
  let merging = false;
  for (let i = 0; i < 600 && !merging; ++i) {
    const info = await call(s, 'GET', '/collections/m');
    merging = info.body.result.config.strata.merging;
    if (merging) assert.equal(info.body.result.status, 'yellow');
    else await new Promise((r) => setTimeout(r, 100));
  }
  assert.ok(merging, 'a merge started');
  const metrics = await (await fetch(s.url + '/metrics')).text();
  assert.match(metrics, /strata_collection_merging\{collection="m"\} 1/);
  const t0 = Date.now();
  assert.equal(await stopServer(s), 0);
  const seconds = (Date.now() - t0) / 1000;
  console.log(`SIGTERM during the merge: exited in ${seconds.toFixed(2)} s`);
  assert.ok(seconds < 15, `SIGTERM took ${seconds} s`);

  s = await startServer(['--data', dir]);
  assert.ok(!s.failed, s.stderr());
  const count = await call(s, 'POST', '/collections/m/points/count', { exact: true });
  assert.equal(count.body.result.count, N);
  const ids = [0, 1, 12345, N - 1];
  const got = await call(s, 'POST', '/collections/m/points', { ids, with_vector: true, with_payload: true });
  assert.equal(got.body.result.length, ids.length);
  for (const p of got.body.result) {
    assert.deepEqual(p.vector, vec(p.id));
    assert.deepEqual(p.payload, { k: p.id });
  }
  const nearest = await call(s, 'POST', '/collections/m/points/search', { vector: vec(777), limit: 1 });
  assert.equal(nearest.body.result[0].id, 777);
  assert.equal(await stopServer(s), 0);
  rmSync(dir, { recursive: true, force: true });
});
