// Every response of `strata serve` checked against Qdrant's OpenAPI schema
// (1.19, ../shared/peers/qdrant-openapi/openapi.json beside the repository,
// or QDRANT_OPENAPI): the 200 body of each endpoint the schema lists, the
// 4XX body of errors, and for the older points/search (which the 1.19
// schema no longer lists) each hit against ScoredPoint. Skipped, saying
// so, where the schema is not on the machine.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import Ajv from 'ajv';
import { startServer, stopServer } from './serve_helpers.js';

const here = dirname(fileURLToPath(import.meta.url));
const schemaPath = process.env.QDRANT_OPENAPI ||
  resolve(here, '..', '..', '..', 'shared', 'peers', 'qdrant-openapi', 'openapi.json');

// OpenAPI 3.0's `nullable` as JSON Schema: a type that also admits null;
// alone (Qdrant's `anyOf: [{$ref}, {nullable: true}]`), null itself.
function toJsonSchema(node) {
  if (Array.isArray(node)) return node.map(toJsonSchema);
  if (node === null || typeof node !== 'object') return node;
  const out = {};
  for (const [k, v] of Object.entries(node)) {
    if (k !== 'nullable' && k !== 'example' && k !== 'format') out[k] = toJsonSchema(v);
  }
  if (node.nullable === true) {
    if (typeof out.type === 'string') out.type = [out.type, 'null'];
    else if (Object.keys(out).length === 0) out.type = 'null';
  }
  return out;
}

test('responses match the Qdrant OpenAPI schema', { skip: !existsSync(schemaPath) && `no schema at ${schemaPath}` }, async () => {
  const doc = toJsonSchema(JSON.parse(readFileSync(schemaPath, 'utf8')));
  const ajv = new Ajv({ strict: false, allErrors: true });
  const compiled = new Map();
  const validatorFor = (schema) => {
    const key = JSON.stringify(schema);
    if (!compiled.has(key)) compiled.set(key, ajv.compile({ ...schema, components: doc.components }));
    return compiled.get(key);
  };
  const expectShape = (schema, body, what) => {
    const validate = validatorFor(schema);
    assert.ok(validate(body), `${what}: ${ajv.errorsText(validate.errors)}\n${JSON.stringify(body).slice(0, 600)}`);
  };
  const responseSchema = (path, method, status) => {
    const op = doc.paths[path]?.[method];
    assert.ok(op, `${method.toUpperCase()} ${path} is not in the schema`);
    return op.responses[status].content['application/json'].schema;
  };

  const dir = mkdtempSync(join(tmpdir(), 'strata-serve-schema-'));
  const s = await startServer(['--data', dir]);
  assert.ok(!s.failed, s.stderr());
  let checked = 0;
  // Calls `method url` and checks its body against `template`'s response.
  const call = async (method, template, url, body, status = 200) => {
    const r = await fetch(s.url + url, { method, headers: { 'content-type': 'application/json' },
                                         body: body === undefined ? undefined : JSON.stringify(body) });
    const json = await r.json();
    assert.equal(r.status, status, `${method} ${url}: ${JSON.stringify(json)}`);
    expectShape(responseSchema(template, method.toLowerCase(), status === 200 ? '200' : '4XX'), json,
                `${method} ${url}`);
    ++checked;
    return json;
  };
  const C = '/collections/{collection_name}';
  await call('PUT', C, '/collections/shapes', { vectors: { size: 4, distance: 'Cosine' } });
  await call('GET', '/collections', '/collections');
  await call('GET', C + '/exists', '/collections/shapes/exists');
  await call('PUT', C + '/index', '/collections/shapes/index', { field_name: 'color', field_schema: 'keyword' });
  const points = Array.from({ length: 300 }, (_, i) => ({
    id: i === 7 ? '5c56c793-69f3-4fbf-87e6-c4bf54c28c26' : i,
    vector: [Math.cos(i), Math.sin(i), (i % 7) / 7, 1], payload: { color: ['red', 'blue'][i % 2], n: i } }));
  await call('PUT', C + '/points', '/collections/shapes/points?wait=true', { points });
  await call('GET', C, '/collections/shapes');
  await call('GET', C + '/points/{id}', '/collections/shapes/points/3');
  await call('POST', C + '/points', '/collections/shapes/points', { ids: [1, 2, '5c56c793-69f3-4fbf-87e6-c4bf54c28c26'], with_vector: true });
  const filter = { must: [{ key: 'color', match: { value: 'red' } }] };
  await call('POST', C + '/points/count', '/collections/shapes/points/count', { filter, exact: true });
  await call('POST', C + '/points/scroll', '/collections/shapes/points/scroll', { limit: 10, filter, with_payload: true });
  await call('POST', C + '/points/query', '/collections/shapes/points/query', { query: [1, 0, 0, 1], limit: 5, filter, with_payload: ['n'] });
  await call('POST', C + '/points/query/batch', '/collections/shapes/points/query/batch',
             { searches: [{ query: [1, 0, 0, 1], limit: 3 }, { query: [0, 1, 0, 1], limit: 2, with_vector: true }] });
  // The older search endpoints: each hit is a ScoredPoint.
  for (const [url, body] of [['/points/search', { vector: [1, 0, 0, 1], limit: 5, with_payload: true }],
                             ['/points/search/batch', { searches: [{ vector: [1, 0, 0, 1], limit: 3 }] }]]) {
    const r = await (await fetch(`${s.url}/collections/shapes${url}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })).json();
    const hits = url.endsWith('batch') ? r.result.flat() : r.result;
    assert.ok(hits.length > 0);
    for (const h of hits) expectShape({ $ref: '#/components/schemas/ScoredPoint' }, h, `POST ${url} hit`);
    ++checked;
  }
  await call('POST', C + '/snapshots', '/collections/shapes/snapshots');
  await call('GET', C + '/snapshots', '/collections/shapes/snapshots');
  await call('POST', C + '/points/delete', '/collections/shapes/points/delete?wait=true', { points: [1, 2] });
  // Errors: Qdrant's ErrorResponse.
  await call('GET', C, '/collections/nope', undefined, 404);
  await call('POST', C + '/points/query', '/collections/shapes/points/query', { query: [1, 2], limit: 3 }, 400);
  await call('PUT', C + '/points', '/collections/shapes/points', { points: [{ id: -1, vector: [1, 0, 0, 0] }] }, 400);
  await call('DELETE', C, '/collections/shapes');
  console.log(`${checked} responses checked against ${schemaPath}`);
  assert.equal(await stopServer(s), 0);
  rmSync(dir, { recursive: true, force: true });
});
