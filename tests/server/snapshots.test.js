// Collection snapshots through the real Qdrant JS client: create, list,
// recover (by name and by file:// URL, into the same and another
// collection), delete. STRATA_BIN: the strata executable (CTest sets it).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import net from 'node:net';
import { QdrantClient } from '@qdrant/js-client-rest';

const BIN = process.env.STRATA_BIN || 'strata';

function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.listen(0, '127.0.0.1', () => { const { port } = s.address(); s.close(() => resolve(port)); });
    s.on('error', reject);
  });
}

let dataDir;
let proc;
let exited;
let client;

before(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'strata-serve-snapshots-'));
  const port = await freePort();
  proc = spawn(BIN, ['serve', '--port', String(port), '--data', dataDir], { stdio: ['ignore', 'inherit', 'inherit'] });
  exited = new Promise((resolve) => proc.on('exit', (code) => resolve(code)));
  for (let i = 0; i < 100; ++i) {
    try {
      if ((await fetch(`http://127.0.0.1:${port}/readyz`)).ok) break;
    } catch { /* not up yet */ }
    await new Promise((r) => setTimeout(r, 100));
  }
  client = new QdrantClient({ url: `http://127.0.0.1:${port}`, checkCompatibility: false });
});

after(async () => {
  proc.kill('SIGTERM');
  assert.equal(await exited, 0, 'SIGTERM exits 0');
  rmSync(dataDir, { recursive: true, force: true });
});

const ids = async (name) => (await client.scroll(name, { limit: 100 })).points.map((p) => p.id).sort((a, b) => a - b);

test('snapshots: create, list, recover, delete', async () => {
  await client.createCollection('snap', { vectors: { size: 3, distance: 'Euclid' } });
  const points = [1, 2, 3].map((i) => ({ id: i, vector: [i, 0, 1], payload: { i } }));
  await client.upsert('snap', { wait: true, points });
  const snap = await client.createSnapshot('snap', { wait: true });
  assert.match(snap.name, /^snap-.*\.snapshot$/);
  assert.ok(snap.size > 0);
  const list = await client.listSnapshots('snap');
  assert.deepEqual(list.map((s) => s.name), [snap.name]);

  await client.delete('snap', { wait: true, points: [1, 2] });
  await client.upsert('snap', { wait: true, points: [{ id: 9, vector: [0, 0, 9] }] });
  assert.deepEqual(await ids('snap'), [3, 9]);
  assert.equal(await client.recoverSnapshot('snap', { location: snap.name }), true);
  assert.deepEqual(await ids('snap'), [1, 2, 3]);
  const p = await client.retrieve('snap', { ids: [2], with_vector: true, with_payload: true });
  assert.deepEqual(p[0].vector, [2, 0, 1]);
  assert.deepEqual(p[0].payload, { i: 2 });

  const location = `file://${join(dataDir, 'snapshots', 'snap', snap.name)}`;
  assert.equal(await client.recoverSnapshot('copy', { location }), true);
  assert.deepEqual(await ids('copy'), [1, 2, 3]);
  await assert.rejects(client.recoverSnapshot('copy', { location: 'file:///etc/passwd' }), (e) => e.status === 400);

  assert.equal(await client.deleteSnapshot('snap', snap.name), true);
  assert.deepEqual(await client.listSnapshots('snap'), []);
});
