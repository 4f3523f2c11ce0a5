// End to end through the official SDK client: initialize, list the tools, call every
// tool (good and bad arguments), check structuredContent and that the text content
// is the same JSON, check that responses stay within the budget, and check that the
// CLI sees what the MCP calls wrote.
//
// TOOLS lists the tools this file covers (the amem and compatibility tools); the
// last test checks that each was called with good arguments and with bad ones. The
// query tools have their own file (query_tools.test.mjs) and are not in the list.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { AMEM, amemClient, amemCli, tempDir, fullGraph } from "./helpers.mjs";

const TOOLS = ["remember", "recall", "forget", "put_memory", "get_memory", "delete_memory",
               "link", "unlink", "define_relation", "write_batch", "changes_since",
               "store_stats", "create_entities", "create_relations", "add_observations",
               "delete_entities", "delete_observations", "delete_relations", "read_graph",
               "search_nodes", "open_nodes"];
const COMPAT = new Set(TOOLS.slice(TOOLS.indexOf("create_entities")));
// docs/MCP.md "Bounded output": a response (both copies of the result and the
// JSON-RPC envelope) stays within 64 KiB.
const MAX_RESPONSE_BYTES = 64 * 1024;

const calledOk = new Set(), calledBad = new Set();

function checkResult(name, r) {
  assert.equal(r.content[0].type, "text", name);
  // Measured as the SDK hands it over; the envelope is a few dozen bytes more.
  const bytes = Buffer.byteLength(JSON.stringify(r));
  assert.ok(bytes <= MAX_RESPONSE_BYTES - 100, `${name}: a ${bytes}-byte response`);
}

// A call that must succeed: its structuredContent, after checking that the text
// content is the same JSON (or, for the delete tools, the same message).
async function call(client, name, args) {
  const r = await client.callTool({ name, arguments: args });
  if (r.isError) throw new Error(`${name} failed: ${r.content[0].text}`);
  checkResult(name, r);
  const text = r.content[0].text;
  if (text.startsWith("{")) {
    assert.deepEqual(JSON.parse(text), r.structuredContent, `${name}: text and structuredContent`);
  } else {
    assert.equal(text, r.structuredContent.message, `${name}: text is the message`);
  }
  calledOk.add(name);
  return r.structuredContent;
}

// A call that must fail with a tool error: its message.
async function callError(client, name, args) {
  const r = await client.callTool({ name, arguments: args });
  assert.equal(r.isError, true, `${name} ${JSON.stringify(args)} should fail`);
  assert.equal(r.structuredContent, undefined, `${name}: no structuredContent on an error`);
  checkResult(name, r);
  calledBad.add(name);
  return r.content[0].text;
}

test("initialize and tools/list", async (t) => {
  const client = await amemClient(t, join(tempDir(t), "store"));
  assert.equal(client.getServerVersion().name, "amem");
  assert.ok(client.getServerCapabilities().tools);
  assert.match(client.getInstructions(), /graph memory/);
  const { tools } = await client.listTools();
  const names = tools.map((x) => x.name);
  for (const expected of TOOLS) assert.ok(names.includes(expected), `missing tool ${expected}`);
  assert.equal(new Set(names).size, names.length, "tool names are unique");
  for (const tool of tools) {
    assert.equal(tool.inputSchema.type, "object", tool.name);
    assert.ok(tool.description.length > 20, tool.name);
    assert.equal(typeof tool.annotations.readOnlyHint, "boolean", tool.name);
    // destructiveHint and idempotentHint mean something only for a tool that writes.
    if (tool.annotations.readOnlyHint) assert.equal(tool.annotations.destructiveHint, undefined);
    else assert.equal(typeof tool.annotations.destructiveHint, "boolean", tool.name);
  }
  const byName = Object.fromEntries(tools.map((x) => [x.name, x]));
  assert.equal(byName.read_graph.annotations.readOnlyHint, true);
  assert.equal(byName.recall.annotations.readOnlyHint, true);
  assert.equal(byName.put_memory.annotations.readOnlyHint, false);
  const destructive = TOOLS.filter((x) => byName[x].annotations.destructiveHint).sort();
  assert.deepEqual(destructive, ["delete_entities", "delete_memory", "delete_observations",
                                 "delete_relations", "forget", "unlink"]);
  // amem's tools refuse unknown fields; the compatibility tools accept and ignore
  // them, like the official server (docs/MCP.md "Protocol").
  for (const name of TOOLS) {
    const schema = byName[name].inputSchema;
    if (COMPAT.has(name)) assert.equal(schema.additionalProperties, undefined, name);
    else assert.equal(schema.additionalProperties, false, name);
  }
  assert.equal(byName.store_stats.inputSchema.properties.as_of, undefined);
  assert.match(byName.store_stats.description, /no as_of/);
  assert.ok(byName.changes_since.inputSchema.properties.as_of);
  assert.ok(byName.get_memory.inputSchema.properties.content_offset);
  assert.ok(byName.open_nodes.inputSchema.properties.cursor);
});

test("policy memory: remember, recall, history, forget, as_of", async (t) => {
  const store = join(tempDir(t), "store");
  const client = await amemClient(t, store);
  const r1 = await call(client, "remember", {
    namespace: "decisions", key: "storage", value: "Use LMDB", run: "run-1", ts: 1000 });
  assert.equal(r1.scope, "project");
  assert.ok(r1.revision >= 1);
  const r2 = await call(client, "remember", {
    namespace: "decisions", key: "storage", value: "Use LMDB with MDB_NOSYNC off", ts: 2000 });
  assert.ok(r2.revision > r1.revision);
  await call(client, "remember", { namespace: "constraints", key: "no-globals",
                                   value: { rule: "no global store" }, scope: "amem" });

  let got = await call(client, "recall", { namespace: "decisions", key: "storage" });
  assert.equal(got.entry.value, "Use LMDB with MDB_NOSYNC off");
  got = await call(client, "recall", { namespace: "decisions", key: "storage", as_of: r1.revision });
  assert.equal(got.entry.value, "Use LMDB");
  got = await call(client, "recall", { namespace: "decisions", key: "storage", at: 1500 });
  assert.equal(got.entry.value, "Use LMDB");
  got = await call(client, "recall", { namespace: "decisions", key: "storage", history: true });
  assert.deepEqual(got.versions.map((v) => v.value), ["Use LMDB", "Use LMDB with MDB_NOSYNC off"]);
  assert.equal(got.versions[0].run, "run-1");
  got = await call(client, "recall", { namespace: "constraints", scope: "amem" });
  assert.equal(got.entries.length, 1);
  assert.deepEqual(JSON.parse(got.entries[0].value), { rule: "no global store" });

  // The CLI sees the same policy memory.
  const cli = amemCli(store, "kv-get", "project", "decisions", "storage");
  assert.equal(cli.value, "Use LMDB with MDB_NOSYNC off");

  const f = await call(client, "forget", { namespace: "decisions", key: "storage" });
  assert.equal(f.deleted, true);
  assert.match(await callError(client, "recall", { namespace: "decisions", key: "storage" }),
               /not ?found/i);
  assert.equal((await call(client, "forget", { namespace: "decisions", key: "storage" })).deleted, false);
  got = await call(client, "recall", { namespace: "decisions", key: "storage", history: true });
  assert.equal(got.versions.length, 3);
  assert.equal(got.versions[2].deleted, true);

  // A long value comes in slices; in a list it is cut.
  const long = "procedure step. ".repeat(5000);  // 80,000 bytes
  await call(client, "remember", { namespace: "procedures", key: "release", value: long });
  let slice = await call(client, "recall", { namespace: "procedures", key: "release" });
  assert.equal(slice.entry.truncated, true);
  assert.equal(slice.entry.value_bytes, long.length);
  let whole = slice.entry.value;
  while (slice.entry.next_value_offset !== undefined) {
    slice = await call(client, "recall", { namespace: "procedures", key: "release",
                                           value_offset: slice.entry.next_value_offset,
                                           max_value_bytes: 24576 });
    whole += slice.entry.value;
  }
  assert.equal(whole, long);
  const listed = await call(client, "recall", { namespace: "procedures" });
  assert.equal(listed.entries[0].truncated, true);
  assert.ok(listed.entries[0].value.length <= 2048);

  assert.match(await callError(client, "remember", { namespace: "decisions", key: "k" }),
               /missing required field "value"/);
  assert.match(await callError(client, "remember", { namespace: "", key: "k", value: "v" }),
               /namespace: must not be empty/);
  assert.match(await callError(client, "recall", { namespace: "d", as_of: 1, at: 5 }),
               /not both/);
  assert.match(await callError(client, "recall", { namespace: "d", cursor: "garbage" }),
               /cursor/);
  assert.match(await callError(client, "recall", { namespace: "procedures", key: "release",
                                                   value_offset: 10000000 }), /past the end/);
  assert.match(await callError(client, "forget", { namespace: "decisions" }),
               /missing required field "key"/);
  assert.match(await callError(client, "forget", { namespace: "decisions", key: "k", scop: "x" }),
               /unknown field "scop"/);
});

test("typed memories, links, get, delete, changes and stats", async (t) => {
  const store = join(tempDir(t), "store");
  const client = await amemClient(t, store);
  const p = await call(client, "put_memory", {
    key: "file:src/store/store.cc", type: "file", content: "The LMDB store.",
    meta: { lang: "c++" }, confidence: 0.9, run: "r1", task: "t1",
    links: [{ rel: "part_of", to: "module:store" }, { rel: "defines", from: "module:store", weight: 0.5 }],
  });
  assert.equal(p.key, "file:src/store/store.cc");
  assert.match(p.id, /^[0-9a-f]{16}$/);
  assert.equal(p.links, 2);
  await call(client, "put_memory", { key: "module:store", type: "module", content: "store/" });

  const g = await call(client, "get_memory", { node: "file:src/store/store.cc" });
  assert.equal(g.node.type, "file");
  assert.equal(g.node.content, "The LMDB store.");
  assert.equal(g.node.truncated, undefined);
  assert.deepEqual(g.node.meta, { lang: "c++" });
  assert.equal(g.node.run, "r1");
  assert.deepEqual(g.out.map((e) => [e.rel, e.dst]), [["part_of", "module:store"]]);
  assert.deepEqual(g.in.map((e) => [e.src, e.rel]), [["module:store", "defines"]]);
  // By id, too.
  assert.equal((await call(client, "get_memory", { node: p.id })).node.key, "file:src/store/store.cc");

  // The CLI sees the node and its edges.
  const cliNode = amemCli(store, "get-node", "file:src/store/store.cc");
  assert.equal(cliNode.content ?? cliNode.node?.content, "The LMDB store.");

  // A 1 MB content is read in slices.
  const big = "a \"quoted\" line of the big file\n".repeat(32000);  // ~1 MB
  await call(client, "put_memory", { key: "file:big.txt", type: "file", content: big });
  let part = await call(client, "get_memory", { node: "file:big.txt" });
  assert.equal(part.node.truncated, true);
  assert.equal(part.node.content_bytes, big.length);
  let content = part.node.content;
  while (part.node.next_content_offset !== undefined) {
    part = await call(client, "get_memory", { node: "file:big.txt", max_content_bytes: 24576,
                                              content_offset: part.node.next_content_offset });
    content += part.node.content;
  }
  assert.equal(content, big);

  assert.match(await callError(client, "define_relation", { name: "Not A Name" }), /relation name/);
  assert.match(await callError(client, "define_relation", { name: 7 }), /name: expected a string/);
  const def = await call(client, "define_relation", { name: "blocks" });
  assert.equal(def.name, "blocks");
  const l = await call(client, "link", { src: "module:store", rel: "blocks", dst: "module:query",
                                         payload: { why: "API" } });
  assert.ok(l.revision > 0);
  assert.match(await callError(client, "link", { src: "a", rel: "not_defined_rel", dst: "b" }),
               /relation/i);
  assert.match(await callError(client, "put_memory", { key: "x", type: "gizmo" }), /must be one of/);
  assert.match(await callError(client, "put_memory", { key: "x", type: "fact", confidence: 2 }),
               /confidence: must be at most 1/);
  assert.match(await callError(client, "put_memory", { key: "x", type: "fact", meta: { n: 1 } }),
               /meta\.n: expected a string/);
  assert.match(await callError(client, "put_memory", { key: "x", type: "fact",
                                                        links: [{ rel: "part_of" }] }),
               /exactly one of "to" or "from"/);
  assert.match(await callError(client, "get_memory", { node: "missing:node" }), /not ?found/i);
  assert.match(await callError(client, "get_memory", { nod: "x" }), /unknown field "nod"/);
  assert.match(await callError(client, "get_memory", { node: "file:big.txt", max_content_bytes: 0 }),
               /max_content_bytes: must be at least 1/);

  const u = await call(client, "unlink", { src: "module:store", rel: "blocks", dst: "module:query" });
  assert.equal(u.deleted, true);
  assert.equal((await call(client, "unlink", { src: "module:store", rel: "blocks",
                                               dst: "module:query" })).deleted, false);
  assert.match(await callError(client, "unlink", { src: "a", rel: "", dst: "b" }),
               /rel: must not be empty/);
  assert.match(await callError(client, "unlink", { src: "a", rel: "no_such_relation", dst: "b" }),
               /relation/i);

  const wb = await call(client, "write_batch", { operations: [
    { op: "node", key: "fact:a", type: "fact", content: "A" },
    { op: "node", key: "fact:b", type: "fact", content: "B" },
    { op: "edge", src: "fact:a", rel: "supports", dst: "fact:b" },
  ], run: "r2" });
  assert.equal(wb.operations, 3);
  const before = (await call(client, "store_stats", {})).revision;
  assert.match(await callError(client, "write_batch", { operations: [
    { op: "node", key: "fact:c", type: "fact" },
    { op: "node", key: "fact:d", type: "nonsense" },
  ] }), /operations\[1\]/);
  assert.equal((await call(client, "store_stats", {})).revision, before, "a bad batch writes nothing");

  const d = await call(client, "delete_memory", { node: "module:store" });
  assert.equal(d.deleted, "module:store");
  assert.equal(d.edges_deleted, 2);
  assert.match(await callError(client, "get_memory", { node: "module:store" }), /not ?found/i);
  const old = await call(client, "get_memory", { node: "module:store", as_of: d.revision - 1 });
  assert.equal(old.node.content, "store/");
  assert.match(await callError(client, "delete_memory", { node: "module:store" }), /not ?found/i);
  assert.match(await callError(client, "delete_memory", {}), /missing required field "node"/);

  const ch = await call(client, "changes_since", { since_rev: 0 });
  assert.ok(ch.changes.length >= 8);
  assert.equal(ch.changes[0].kind, "put_node");
  const kinds = new Set(ch.changes.map((c) => c.kind));
  assert.ok(kinds.has("del_node"));
  assert.equal(ch.revision, d.revision);
  // Pages of 2 cover the same changes.
  let all = [], cursor;
  do {
    const page = await call(client, "changes_since", cursor ? { since_rev: 0, limit: 2, cursor }
                                                              : { since_rev: 0, limit: 2 });
    assert.ok(page.changes.length <= 2);
    all.push(...page.changes);
    cursor = page.nextCursor;
  } while (cursor);
  assert.deepEqual(all, ch.changes);
  // as_of ends the window: what changed between two revisions.
  const window = await call(client, "changes_since", { since_rev: 1, as_of: 3 });
  assert.equal(window.revision, 3);
  assert.deepEqual([...new Set(window.changes.map((c) => c.rev))], [2, 3]);
  assert.deepEqual(window.changes, ch.changes.filter((c) => c.rev > 1 && c.rev <= 3));
  assert.match(await callError(client, "changes_since", {}), /since_rev or since_ts/);
  assert.match(await callError(client, "changes_since", { since_rev: -1 }), /at least 0/);
  assert.match(await callError(client, "changes_since", { since_rev: 0, as_of: 1, at: 5 }),
               /not both/);
  assert.match(await callError(client, "changes_since", { since_rev: 0, as_of: 99999 }),
               /after the latest/);

  const stats = await call(client, "store_stats", {});
  assert.equal(stats.path.endsWith("store"), true);
  assert.ok(stats.live_nodes >= 3);
  // Stats are of the latest state only: as_of is refused, not ignored.
  assert.match(await callError(client, "store_stats", { as_of: 1 }), /unknown field "as_of"/);
});

test("compatibility tools: every tool, paging, as_of, bad arguments, CLI view", async (t) => {
  const store = join(tempDir(t), "store");
  const client = await amemClient(t, store);
  const entities = [];
  for (let i = 0; i < 30; i++) {
    entities.push({ name: `e${String(i).padStart(2, "0")}`, entityType: "thing",
                    observations: [`observation ${i}`] });
  }
  const created = await call(client, "create_entities", { entities });
  assert.equal(created.entities.length, 30);
  assert.equal(created.truncated, undefined);
  await call(client, "create_relations", { relations: [
    { from: "e00", to: "e01", relationType: "calls" }, { from: "e01", to: "e02", relationType: "needs it" }] });
  const rev = (await call(client, "store_stats", {})).revision;

  // Pages of 7 items cover 30 entities and 2 relations exactly once.
  const seen = { entities: [], relations: [] };
  let cursor, pages = 0;
  do {
    const page = await call(client, "read_graph", cursor ? { limit: 7, cursor } : { limit: 7 });
    assert.ok(page.entities.length + page.relations.length <= 7);
    seen.entities.push(...page.entities.map((e) => e.name));
    seen.relations.push(...page.relations.map((r) => r.relationType));
    cursor = page.nextCursor;
    pages++;
    if (pages === 1) await call(client, "delete_entities", { entityNames: ["e29"] });  // pinned
  } while (cursor);
  assert.equal(pages, 5);
  assert.equal(new Set(seen.entities).size, 30);
  assert.deepEqual(seen.relations.sort(), ["calls", "needs it"]);

  const now = await call(client, "read_graph", {});
  assert.equal(now.entities.length, 29);
  const then = await call(client, "read_graph", { as_of: rev });
  assert.equal(then.entities.length, 30);
  const opened = await call(client, "open_nodes", { names: ["e29"], as_of: rev });
  assert.deepEqual(opened.entities[0].observations, ["observation 29"]);

  // add_observations, delete_observations, delete_relations (also in parity.test.mjs).
  const added = await call(client, "add_observations", { observations: [
    { entityName: "e00", contents: ["second", "observation 0"] }] });
  assert.deepEqual(added.results, [{ entityName: "e00", addedObservations: ["second"] }]);
  let e00 = (await call(client, "open_nodes", { names: ["e00"] })).entities[0];
  assert.deepEqual(e00.observations, ["observation 0", "second"]);
  const delObs = await call(client, "delete_observations", { deletions: [
    { entityName: "e00", observations: ["observation 0", "never there"] }] });
  assert.equal(delObs.success, true);
  assert.match(delObs.message, /Deleted 1 of 2/);
  e00 = (await call(client, "open_nodes", { names: ["e00"] })).entities[0];
  assert.deepEqual(e00.observations, ["second"]);
  const delRel = await call(client, "delete_relations", { relations: [
    { from: "e01", to: "e02", relationType: "needs it" }] });
  assert.equal(delRel.message, "Relations deleted successfully");
  assert.deepEqual((await call(client, "read_graph", {})).relations.map((r) => r.relationType),
                   ["calls"]);
  const found = await call(client, "search_nodes", { query: "SECOND" });
  assert.deepEqual(found.entities.map((e) => e.name), ["e00"]);
  assert.deepEqual(found.relations.map((r) => r.relationType), ["calls"]);

  // Unknown fields are ignored, as by the official server (an entity copied from
  // memory.jsonl keeps its "type").
  const extra = await call(client, "create_entities", { entities: [
    { type: "entity", name: "copied", entityType: "thing", observations: ["x"], id: 7 }],
    note: "ignored" });
  assert.deepEqual(extra.entities, [{ name: "copied", entityType: "thing", observations: ["x"] }]);
  await call(client, "create_relations", { relations: [
    { type: "relation", from: "copied", to: "e00", relationType: "knows" }] });
  await call(client, "add_observations", { observations: [
    { entityName: "copied", contents: ["y"], source: "chat" }] });
  await call(client, "delete_observations", { deletions: [
    { entityName: "copied", observations: ["y"], why: "wrong" }] });
  await call(client, "delete_relations", { relations: [
    { type: "relation", from: "copied", to: "e00", relationType: "knows" }] });
  assert.deepEqual((await call(client, "open_nodes", { names: ["copied"], extra: 1 })).entities,
                   [{ name: "copied", entityType: "thing", observations: ["x"] }]);
  await call(client, "search_nodes", { query: "copied", extra: true });
  await call(client, "read_graph", { verbose: true });
  await call(client, "delete_entities", { entityNames: ["copied"], reason: "test" });

  // The CLI sees entities and observations as documented nodes and edges.
  const node = amemCli(store, "get-node", "entity:e00");
  assert.ok(JSON.stringify(node).includes("thing"));
  const obsIn = amemCli(store, "in", "entity:e00", "--rel", "part_of");
  assert.ok(JSON.stringify(obsIn).includes("obs:e00#"));

  assert.match(await callError(client, "create_entities", { entities: [{ name: "x" }] }),
               /entities\[0\]: missing required field "entityType"/);
  assert.match(await callError(client, "create_relations", { relations: [
    { from: "e00", to: "nobody", relationType: "r" }] }), /Entity with name nobody not found/);
  assert.match(await callError(client, "add_observations", { observations: [
    { entityName: "nobody", contents: ["x"] }] }), /Entity with name nobody not found/);
  assert.match(await callError(client, "add_observations", { observations: [
    { entityName: "e00", contents: "x" }] }), /contents: expected an array/);
  assert.match(await callError(client, "delete_entities", { entityNames: "e00" }),
               /entityNames: expected an array/);
  assert.match(await callError(client, "delete_entities", {}), /missing required field "entityNames"/);
  assert.match(await callError(client, "delete_observations", { deletions: [{ entityName: "e00" }] }),
               /deletions\[0\]: missing required field "observations"/);
  assert.match(await callError(client, "delete_relations", { relations: [
    { from: "e00", to: "e01", relationType: 5 }] }), /relations\[0\]\.relationType: expected a string/);
  assert.match(await callError(client, "search_nodes", {}), /missing required field "query"/);
  assert.match(await callError(client, "open_nodes", { names: "e00" }), /names: expected an array/);
  assert.match(await callError(client, "read_graph", { cursor: "r1o" }), /cursor/);
});

test("big results are cut to the budget and page on", async (t) => {
  const client = await amemClient(t, join(tempDir(t), "store"));
  const entities = [{ name: "hub", entityType: "service", observations: [] }];
  for (let i = 0; i < 3000; i++) {
    entities.push({ name: `component-${String(i).padStart(4, "0")}-with-a-longer-name`,
                    entityType: "module", observations: [`observation ${i} of a long-ish text`] });
  }
  const created = await call(client, "create_entities", { entities });
  assert.equal(created.truncated, true);
  assert.equal(created.total, 3001);
  assert.deepEqual(created.entities[0], entities[0]);
  const relations = entities.slice(1).map((e) => ({ from: "hub", to: e.name, relationType: "depends on" }));
  const rel = await call(client, "create_relations", { relations });
  assert.equal(rel.truncated, true);
  assert.equal(rel.total, 3000);
  const contents = Array.from({ length: 3000 }, (_, i) => `hub fact ${i} ${"x".repeat(40)}`);
  const obs = await call(client, "add_observations", { observations: [{ entityName: "hub", contents }] });
  assert.equal(obs.truncated, true);
  assert.equal(obs.observationsAdded, 3000);

  // open_nodes of the hub: several pages, its observations in order, every relation.
  const hub = await fullGraph(client, "open_nodes", { names: ["hub"] });
  assert.equal(hub.entities.length, 1);
  assert.deepEqual(hub.entities[0].observations, contents);
  assert.equal(hub.relations.length, 3000);
  const first = await call(client, "open_nodes", { names: ["hub"] });
  assert.ok(first.nextCursor);
  assert.equal(first.entities[0].truncated, true);
  assert.equal(first.entities[0].observationCount, 3000);

  // read_graph by default: a first page within the budget, and the whole graph in pages.
  const page = await call(client, "read_graph", {});
  assert.ok(page.nextCursor);
  const graph = await fullGraph(client);
  assert.equal(graph.entities.length, 3001);
  assert.equal(graph.relations.length, 3000);
  assert.deepEqual(graph.entities.find((e) => e.name === "hub").observations, contents);
});

test("outside a git work tree the server exits 3 (not found)", async (t) => {
  const env = { ...process.env };
  delete env.AMEM_STORE;
  const r = spawnSync(AMEM, ["mcp"], { cwd: tempDir(t), env, input: "", encoding: "utf8" });
  assert.equal(r.status, 3);
  assert.match(r.stderr, /not inside a git work tree/);
});

test("unknown tool is a protocol error", async (t) => {
  const client = await amemClient(t, join(tempDir(t), "store"));
  await assert.rejects(client.callTool({ name: "no_such_tool", arguments: {} }), /unknown tool/i);
});

test("every tool was called with good and with bad arguments", () => {
  assert.deepEqual(TOOLS.filter((x) => !calledOk.has(x)), [], "tools never called successfully");
  assert.deepEqual(TOOLS.filter((x) => !calledBad.has(x)), [], "tools never given bad arguments");
});
