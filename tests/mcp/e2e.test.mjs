// End to end through the official SDK client: initialize, list the tools, call every
// tool (good and bad arguments), check structuredContent, and check that the CLI
// sees what the MCP calls wrote.
import { test } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import { amemClient, amemCli, tempDir, call } from "./helpers.mjs";

async function callError(client, name, args) {
  const r = await client.callTool({ name, arguments: args });
  assert.equal(r.isError, true, `${name} ${JSON.stringify(args)} should fail`);
  assert.equal(r.content[0].type, "text");
  return r.content[0].text;
}

test("initialize and tools/list", async (t) => {
  const client = await amemClient(t, join(tempDir(t), "store"));
  assert.equal(client.getServerVersion().name, "amem");
  assert.ok(client.getServerCapabilities().tools);
  assert.match(client.getInstructions(), /graph memory/);
  const { tools } = await client.listTools();
  const names = tools.map((x) => x.name);
  for (const expected of ["remember", "recall", "forget", "put_memory", "get_memory",
                          "delete_memory", "link", "unlink", "define_relation", "write_batch",
                          "changes_since", "store_stats", "create_entities", "create_relations",
                          "add_observations", "delete_entities", "delete_observations",
                          "delete_relations", "read_graph", "search_nodes", "open_nodes"]) {
    assert.ok(names.includes(expected), `missing tool ${expected}`);
  }
  assert.equal(new Set(names).size, names.length, "tool names are unique");
  for (const tool of tools) {
    assert.equal(tool.inputSchema.type, "object", tool.name);
    assert.ok(tool.description.length > 20, tool.name);
    assert.equal(typeof tool.annotations.readOnlyHint, "boolean", tool.name);
    assert.equal(typeof tool.annotations.destructiveHint, "boolean", tool.name);
    if (tool.annotations.readOnlyHint) assert.equal(tool.annotations.destructiveHint, false);
  }
  const ro = Object.fromEntries(tools.map((x) => [x.name, x.annotations.readOnlyHint]));
  assert.equal(ro.read_graph, true);
  assert.equal(ro.recall, true);
  assert.equal(ro.put_memory, false);
  const destructive = tools.filter((x) => x.annotations.destructiveHint).map((x) => x.name).sort();
  assert.deepEqual(destructive, ["delete_entities", "delete_memory", "delete_observations",
                                 "delete_relations", "forget", "unlink"]);
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

  assert.match(await callError(client, "remember", { namespace: "decisions", key: "k" }),
               /missing required field "value"/);
  assert.match(await callError(client, "remember", { namespace: "", key: "k", value: "v" }),
               /namespace: must not be empty/);
  assert.match(await callError(client, "recall", { namespace: "d", as_of: 1, at: 5 }),
               /not both/);
  assert.match(await callError(client, "recall", { namespace: "d", cursor: "garbage" }),
               /cursor/);
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
  assert.deepEqual(g.node.meta, { lang: "c++" });
  assert.equal(g.node.run, "r1");
  assert.deepEqual(g.out.map((e) => [e.rel, e.dst]), [["part_of", "module:store"]]);
  assert.deepEqual(g.in.map((e) => [e.src, e.rel]), [["module:store", "defines"]]);
  // By id, too.
  assert.equal((await call(client, "get_memory", { node: p.id })).node.key, "file:src/store/store.cc");

  // The CLI sees the node and its edges.
  const cliNode = amemCli(store, "get-node", "file:src/store/store.cc");
  assert.equal(cliNode.content ?? cliNode.node?.content, "The LMDB store.");

  await call(client, "define_relation", { name: "blocks" });
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

  const u = await call(client, "unlink", { src: "module:store", rel: "blocks", dst: "module:query" });
  assert.equal(u.deleted, true);
  assert.equal((await call(client, "unlink", { src: "module:store", rel: "blocks",
                                               dst: "module:query" })).deleted, false);

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

  const ch = await call(client, "changes_since", { since_rev: 0 });
  assert.ok(ch.changes.length >= 8);
  assert.equal(ch.changes[0].kind, "put_node");
  const kinds = new Set(ch.changes.map((c) => c.kind));
  assert.ok(kinds.has("del_node"));
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
  assert.match(await callError(client, "changes_since", {}), /since_rev or since_ts/);

  const stats = await call(client, "store_stats", {});
  assert.equal(stats.path.endsWith("store"), true);
  assert.ok(stats.live_nodes >= 3);
});

test("compatibility tools: paging, as_of, bad arguments, CLI view", async (t) => {
  const store = join(tempDir(t), "store");
  const client = await amemClient(t, store);
  const entities = [];
  for (let i = 0; i < 30; i++) {
    entities.push({ name: `e${String(i).padStart(2, "0")}`, entityType: "thing",
                    observations: [`observation ${i}`] });
  }
  const created = await call(client, "create_entities", { entities });
  assert.equal(created.entities.length, 30);
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

  // The CLI sees entities and observations as documented nodes and edges.
  const node = amemCli(store, "get-node", "entity:e00");
  assert.ok(JSON.stringify(node).includes("thing"));
  const obsIn = amemCli(store, "in", "entity:e00", "--rel", "part_of");
  assert.ok(JSON.stringify(obsIn).includes("obs:e00#"));

  assert.match(await callError(client, "create_entities", { entities: [{ name: "x" }] }),
               /entities\[0\]: missing required field "entityType"/);
  assert.match(await callError(client, "create_relations", { relations: [
    { from: "e00", to: "nobody", relationType: "r" }] }), /Entity with name nobody not found/);
  assert.match(await callError(client, "search_nodes", {}), /missing required field "query"/);
  assert.match(await callError(client, "open_nodes", { names: "e00" }), /names: expected an array/);
  assert.match(await callError(client, "read_graph", { cursor: "r1o" }), /cursor/);
});

test("unknown tool is a protocol error", async (t) => {
  const client = await amemClient(t, join(tempDir(t), "store"));
  await assert.rejects(client.callTool({ name: "no_such_tool", arguments: {} }), /unknown tool/i);
});
