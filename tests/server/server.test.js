// strata serve against the real Qdrant JS client (@qdrant/js-client-rest).
// STRATA_BIN: the strata executable (CTest sets it).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { QdrantClient } from '@qdrant/js-client-rest';
import { startServer } from './serve_helpers.js';

const DIM = 16;
const N = 100000;

// Deterministic pseudo-random vectors (mulberry32).
function rng(seed) {
  return () => { seed |= 0; seed = (seed + 0x6D2B79F5) | 0; let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t; return ((t ^ (t >>> 14)) >>> 0) / 4294967296; };
}
const rand = rng(42);
const vectors = Array.from({ length: N }, () => Array.from({ length: DIM }, () => rand() * 2 - 1));
const cosine = (a, b) => { let d = 0, na = 0, nb = 0;
  for (let i = 0; i < a.length; ++i) { d += a[i] * b[i]; na += a[i] * a[i]; nb += b[i] * b[i]; }
  return d / Math.sqrt(na * nb); };
const color = (i) => ['red', 'green', 'blue'][i % 3];
const colorCount = (c) => vectors.reduce((n, _, i) => n + (color(i) === c ? 1 : 0), 0);

let dataDir;
let server;
let client;

before(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'strata-serve-'));
  server = await startServer(['--data', dataDir]);
  assert.ok(!server.failed, 'strata serve did not start: ' + server.stderr());
  client = new QdrantClient({ url: `http://127.0.0.1:${server.port}`, checkCompatibility: false });
});

after(async () => {
  if (server && server.proc.exitCode === null) {
    server.proc.kill('SIGTERM');
    const code = await server.exited;
    assert.equal(code, 0, 'SIGTERM exits 0');
  }
  rmSync(dataDir, { recursive: true, force: true });
});

test('collections: create, info, list, exists, index', async () => {
  assert.equal(await client.createCollection('docs', { vectors: { size: DIM, distance: 'Cosine' } }), true);
  const info = await client.getCollection('docs');
  assert.equal(info.status, 'green');
  assert.equal(info.config.params.vectors.size, DIM);
  assert.equal(info.config.params.vectors.distance, 'Cosine');
  const list = await client.getCollections();
  assert.deepEqual(list.collections.map((c) => c.name), ['docs']);
  assert.equal((await client.collectionExists('docs')).exists, true);
  assert.equal((await client.collectionExists('nope')).exists, false);
  const idx = await client.createPayloadIndex('docs', { field_name: 'color', field_schema: 'keyword', wait: true });
  assert.equal(idx.status, 'completed');
  await assert.rejects(client.createCollection('docs', { vectors: { size: DIM, distance: 'Cosine' } }));
  await assert.rejects(client.getCollection('nope'), (e) => e.status === 404);
});

test('upsert in batches, search with recall, filters, retrieve, count, scroll, delete', async () => {
  const B = 1000;
  for (let s = 0; s < N; s += B) {
    const points = [];
    for (let i = s; i < Math.min(N, s + B); ++i) {
      points.push({ id: i, vector: vectors[i], payload: { color: color(i), n: i } });
    }
    const r = await client.upsert('docs', { wait: true, points });
    assert.equal(r.status, 'completed');
  }
  // The batch form and a UUID id.
  const uuid = '5c56c793-69f3-4fbf-87e6-c4bf54c28c26';
  await client.upsert('docs', { wait: true, batch: { ids: [uuid], vectors: [vectors[0].map((x) => -x)], payloads: [{ color: 'uuid' }] } });
  assert.equal((await client.count('docs', { exact: true })).count, N + 1);
  // Qdrant's states: green, or yellow while an optimization (a merge) runs.
  const afterUpsert = await client.getCollection('docs');
  assert.ok(['green', 'yellow'].includes(afterUpsert.status), afterUpsert.status);
  assert.equal(afterUpsert.points_count, N + 1);

  // Recall@10 against brute force.
  const Q = 50;
  let hits = 0;
  for (let q = 0; q < Q; ++q) {
    const query = vectors[(q * 97) % N].map((x) => x + 0.05);
    const exact = vectors.map((v, i) => [cosine(query, v), i]).sort((a, b) => b[0] - a[0]).slice(0, 10);
    const res = await client.search('docs', { vector: query, limit: 10, params: { hnsw_ef: 100 } });
    assert.equal(res.length, 10);
    for (let i = 1; i < res.length; ++i) assert.ok(res[i - 1].score >= res[i].score, 'best first');
    assert.ok(Math.abs(res[0].score - cosine(query, vectors[res[0].id])) < 1e-3, 'score is cosine similarity');
    const ids = new Set(res.map((p) => p.id));
    hits += exact.filter(([, i]) => ids.has(i)).length;
  }
  const recall = hits / (Q * 10);
  assert.ok(recall >= 0.9, `recall@10 ${recall}`);

  // Filtered search and the query API.
  const filter = { must: [{ key: 'color', match: { value: 'blue' } }] };
  const fres = await client.search('docs', { vector: vectors[5], limit: 10, filter, with_payload: true });
  assert.equal(fres.length, 10);
  for (const p of fres) assert.equal(p.payload.color, 'blue');
  assert.equal(fres[0].id, 5);
  const qres = await client.query('docs', { query: vectors[7], limit: 3, with_payload: ['n'] });
  assert.equal(qres.points[0].id, 7);
  assert.deepEqual(qres.points[0].payload, { n: 7 });
  const batch = await client.searchBatch('docs', { searches: [{ vector: vectors[1], limit: 2 }, { vector: vectors[2], limit: 2 }] });
  assert.equal(batch.length, 2);
  assert.equal(batch[1][0].id, 2);
  const thr = await client.search('docs', { vector: vectors[3], limit: 50, score_threshold: 0.9 });
  for (const p of thr) assert.ok(p.score >= 0.9);

  // Retrieve (numbers and the UUID), count with a filter, scroll pages.
  const got = await client.retrieve('docs', { ids: [3, uuid, 999999], with_vector: true });
  assert.equal(got.length, 2);
  const byId = Object.fromEntries(got.map((p) => [String(p.id), p]));
  assert.deepEqual(byId[uuid].payload, { color: 'uuid' });
  assert.equal(byId['3'].vector.length, DIM);
  assert.equal((await client.count('docs', { filter, exact: true })).count, colorCount('blue'));
  const page1 = await client.scroll('docs', { limit: 100, filter });
  assert.equal(page1.points.length, 100);
  assert.equal(page1.points[0].id, 2);
  const page2 = await client.scroll('docs', { limit: 100, filter, offset: page1.next_page_offset });
  assert.ok(page2.points[0].id > page1.points[99].id);

  // Delete by ids and by filter.
  await client.delete('docs', { wait: true, points: [0, 1, uuid] });
  await client.delete('docs', { wait: true, filter: { must: [{ key: 'color', match: { value: 'green' } }] } });
  assert.equal((await client.count('docs', { exact: true })).count, N - 1 - colorCount('green'));
  assert.equal((await client.retrieve('docs', { ids: [0, 1, 4] })).length, 0);

  // Errors are 4xx in Qdrant's shape.
  const bad = await fetch(`http://127.0.0.1:${server.port}/collections/docs/points/search`,
                          { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ vector: [1, 2], limit: 3 }) });
  assert.equal(bad.status, 400);
  const body = await bad.json();
  assert.match(body.status.error, /dimension/);
  const metrics = await (await fetch(`http://127.0.0.1:${server.port}/metrics`)).text();
  assert.match(metrics, /strata_collection_points\{collection="docs"\}/);
  assert.equal(await client.deleteCollection('docs'), true);
});

test('non-loopback host without a key refuses to start', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'strata-serve-nokey-'));
  const s = await startServer(['--data', dir, '--host', '0.0.0.0'], { STRATA_API_KEY: '' });
  const code = await s.exited;
  assert.notEqual(code, 0);
  assert.match(s.stderr(), /API key/);
  rmSync(dir, { recursive: true, force: true });
});

test('api key: missing 401, wrong 403, right 200', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'strata-serve-key-'));
  const keyFile = join(dir, 'key');
  writeFileSync(keyFile, 'sekret\n');
  const s = await startServer(['--data', join(dir, 'data'), '--api-key-file', keyFile]);
  assert.ok(!s.failed, s.stderr());
  const url = `http://127.0.0.1:${s.port}/collections`;
  assert.equal((await fetch(url)).status, 401);
  assert.equal((await fetch(url, { headers: { 'api-key': 'wrong' } })).status, 403);
  const good = new QdrantClient({ url: `http://127.0.0.1:${s.port}`, apiKey: 'sekret', checkCompatibility: false });
  assert.deepEqual((await good.getCollections()).collections, []);
  s.proc.kill('SIGTERM');
  assert.equal(await s.exited, 0);
  rmSync(dir, { recursive: true, force: true });
});

test('limits: body size, batch size, limit, dimension are 4xx in Qdrant\'s error shape', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'strata-serve-limits-'));
  const s = await startServer(['--data', dir, '--max-body-bytes', '4096', '--max-batch', '5', '--max-limit', '20']);
  assert.ok(!s.failed, s.stderr());
  const base = `http://127.0.0.1:${s.port}/collections/l`;
  const call = async (method, path, body) => {
    const r = await fetch(base + path, { method, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const text = await r.text();
    return { status: r.status, body: text ? JSON.parse(text) : null };
  };
  assert.equal((await call('PUT', '', { vectors: { size: 2, distance: 'Dot' } })).status, 200);
  const dim = await call('PUT', '', { vectors: { size: 100000000, distance: 'Dot' } });
  assert.equal(dim.status, 400);
  const big = await call('PUT', '/points', { points: [{ id: 1, vector: [1, 2], payload: { pad: 'x'.repeat(8000) } }] });
  assert.equal(big.status, 413);
  assert.match(big.body.status.error, /too large/);
  const points = Array.from({ length: 6 }, (_, i) => ({ id: i, vector: [1, i] }));
  const batch = await call('PUT', '/points', { points });
  assert.equal(batch.status, 400);
  assert.match(batch.body.status.error, /limit of 5/);
  const limit = await call('POST', '/points/search', { vector: [1, 0], limit: 21 });
  assert.equal(limit.status, 400);
  assert.match(limit.body.status.error, /limit/);
  s.proc.kill('SIGTERM');
  assert.equal(await s.exited, 0);
  rmSync(dir, { recursive: true, force: true });
});
