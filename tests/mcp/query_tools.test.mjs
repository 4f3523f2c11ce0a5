// The query tools of `amem mcp` through the official SDK client: every one is listed
// with an input schema and annotations, answers with structuredContent on a small
// store, reads the past with as_of, and agrees with the CLI (`amem QUERY --json`).
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, realpathSync } from "node:fs";
import { join } from "node:path";
import { AMEM, amemClient, amemCli, tempDir, call, here } from "./helpers.mjs";

const QUERY_TOOLS = ["context", "text_search", "hybrid_search", "similar", "centrality",
  "traverse", "find_memories", "temporal", "impact", "resolve", "path", "revise", "gaps",
  "analogy", "drift", "consolidate"];

async function callError(client, name, args) {
  const r = await client.callTool({ name, arguments: args });
  assert.equal(r.isError, true, `${name} ${JSON.stringify(args)} should fail`);
  assert.equal(r.content[0].type, "text");
  return r.content[0].text;
}

const FIXTURE = JSON.parse(readFileSync(join(here, "query_fixture.json"), "utf8"));

// The store of query_fixture.json (described there); returns its two revisions.
async function populate(client) {
  const revs = [];
  for (const batch of FIXTURE.batches) revs.push((await call(client, "write_batch", batch)).revision);
  return revs;
}

const keys = (rows) => rows.map((r) => r.key);

test("query tools are listed with schemas and annotations", async (t) => {
  const client = await amemClient(t, join(tempDir(t), "store"));
  const { tools } = await client.listTools();
  const byName = Object.fromEntries(tools.map((x) => [x.name, x]));
  for (const name of [...QUERY_TOOLS, "export_snapshot"]) {
    const tool = byName[name];
    assert.ok(tool, `missing tool ${name}`);
    assert.equal(tool.inputSchema.type, "object", name);
    assert.ok(tool.inputSchema.properties.as_of, `${name} takes as_of`);
    assert.ok(tool.inputSchema.properties.at, `${name} takes at`);
    assert.ok(tool.description.length > 40, name);
    // export_snapshot may replace an earlier snapshot file (with overwrite: true);
    // a read-only tool's list entry leaves destructiveHint out.
    assert.equal(tool.annotations.destructiveHint ?? false, name === "export_snapshot", name);
    if (tool.annotations.readOnlyHint) assert.equal(tool.annotations.destructiveHint, undefined, name);
    assert.equal(tool.annotations.openWorldHint, false, name);
    if (name !== "export_snapshot") assert.ok(tool.inputSchema.properties.limit, `${name} takes limit`);
    const writes = name === "consolidate" || name === "export_snapshot";
    assert.equal(tool.annotations.readOnlyHint, !writes, name);
  }
  assert.equal(byName.consolidate.inputSchema.properties.execute.type, "boolean");
  assert.deepEqual(byName.traverse.inputSchema.required, ["node"]);
  assert.deepEqual(byName.export_snapshot.inputSchema.required, ["path"]);
});

test("every query tool answers with structuredContent", async (t) => {
  const dir = tempDir(t);
  const store = join(dir, "store");
  const client = await amemClient(t, store, ["--export-dir", dir]);
  const [rev1, rev2] = await populate(client);

  let r = await call(client, "traverse", { node: "file:src/store.cc", depth: 1 });
  assert.equal(r.query, "traverse");
  assert.equal(r.revision, rev2);
  assert.deepEqual(keys(r.nodes).sort(), ["file:src/store.cc", "module:store", "symbol:Store::Open"]);
  // The CLI gives the same answer (the tool adds the revision it read).
  const cli = amemCli(store, "traverse", "file:src/store.cc", "--depth", "1");
  delete r.revision;
  assert.deepEqual(r, cli);

  r = await call(client, "find_memories", { types: ["decision"] });
  assert.equal(r.nodes[0].key, "decision:use-lmdb-v2");  // newest first
  assert.deepEqual(keys(r.nodes).sort(), ["decision:tabs", "decision:use-lmdb", "decision:use-lmdb-v2"]);
  r = await call(client, "find_memories", { types: ["decision"], as_of: rev1 });
  assert.deepEqual(keys(r.nodes).sort(), ["decision:tabs", "decision:use-lmdb"]);

  r = await call(client, "temporal", { earlier: "run:r1", later: "run:r2" });
  assert.deepEqual(keys(r.added).sort(), ["decision:use-lmdb-v2", "fact:cache-off"]);
  assert.equal(r.corrected[0].older.key, "decision:use-lmdb");

  r = await call(client, "impact", { node: "fact:lmdb-fast" });
  assert.deepEqual(keys(r.dependents).sort(), ["decision:use-lmdb", "inference:reads-cheap"]);

  r = await call(client, "resolve", { node: "decision:use-lmdb" });
  assert.equal(r.current.key, "decision:use-lmdb-v2");
  r = await call(client, "resolve", { node: "decision:use-lmdb", as_of: rev1 });
  assert.equal(r.current.key, "decision:use-lmdb");

  r = await call(client, "path", { from: "fact:lmdb-safe", to: "symbol:Store::Open" });
  assert.equal(r.found, true);
  assert.equal(r.nodes.length, 5);
  assert.equal(r.edges.length, 4);

  const ctx = await client.callTool({ name: "context",
    arguments: { seeds: ["file:src/store.cc"], depth: 1, budget_tokens: 500 } });
  assert.equal(ctx.isError, false);
  assert.match(ctx.content[0].text, /^# amem context/);
  assert.match(ctx.content[0].text, /file:src\/store\.cc --defines--> symbol:Store::Open/);
  assert.equal(ctx.structuredContent.query, "context");
  assert.ok(ctx.structuredContent.tokens <= 500);
  const q = await call(client, "context", { question: "which storage engine", question_seeds: 1 });
  assert.match(q.seeds[0], /^decision:use-lmdb/);

  r = await call(client, "text_search", { query: "LMDB", limit: 2 });
  assert.equal(r.results.length, 2);
  assert.ok(r.results.every((x) => x.score > 0));
  r = await call(client, "hybrid_search", { query: "snapshot cache enabled", limit: 3 });
  assert.match(r.results[0].key, /^fact:cache-/);
  r = await call(client, "similar", { node: "fact:cache-on", limit: 1 });
  assert.equal(r.results[0].key, "fact:cache-on-copy");
  r = await call(client, "centrality", { metric: "degree", limit: 1 });
  assert.equal(r.results[0].key, "decision:use-lmdb");

  r = await call(client, "revise", { node: "fact:lmdb-fast" });
  assert.deepEqual(keys(r.unsupported_inferences), ["inference:reads-cheap"]);
  r = await call(client, "gaps", {});
  assert.ok(r.gaps.some((g) => g.key === "decision:use-lmdb-v2" && g.kind === "unjustified_decision"));
  r = await call(client, "analogy", { node: "fact:lmdb-safe", limit: 2 });
  assert.equal(r.anchor.key, "fact:lmdb-safe");
  assert.ok(r.analogies.length <= 2);
  r = await call(client, "drift", { topic: "storage engine" });
  assert.equal(r.clusters[0].head.key, "decision:use-lmdb-v2");

  // consolidate: a dry run writes nothing; execute writes the plan once.
  r = await call(client, "consolidate", {});
  assert.equal(r.dry_run, true);
  assert.equal(r.duplicate_count, 1);
  assert.equal(r.contradiction_count, 2);
  assert.equal((await call(client, "store_stats", {})).revision, rev2);
  r = await call(client, "consolidate", { execute: true });
  assert.equal(r.applied.supersedes_written, 1);
  assert.ok(r.applied.revision > rev2);
  assert.equal((await call(client, "consolidate", {})).duplicate_count, 0);

  // export_snapshot: a file the CLI verifies.
  // Paths are relative to the server's export directory (--export-dir DIR here).
  mkdirSync(join(dir, "out"));
  const out = join(realpathSync(dir), "out", "v1.amem");
  r = await call(client, "export_snapshot", { path: "out/v1.amem", as_of: rev1 });
  assert.equal(r.revision, rev1);
  assert.equal(r.path, out);
  assert.ok(existsSync(out));
  execFileSync(AMEM, ["verify", out], { encoding: "utf8" });  // throws unless it verifies
  const info = amemCli(store, "traverse", "decision:use-lmdb", "--snapshot", out, "--direction", "in");
  assert.ok(!keys(info.nodes).includes("decision:use-lmdb-v2"));
});

test("query tools report bad arguments as tool errors", async (t) => {
  const client = await amemClient(t, join(tempDir(t), "store"));
  await populate(client);
  assert.match(await callError(client, "traverse", { node: "file:nope.cc" }), /file:nope\.cc.*check the key/s);
  assert.match(await callError(client, "impact", { node: "fact:lmdb-fast", depth: 0 }),
               /depth: must be at least 1/);
  assert.match(await callError(client, "find_memories", { types: ["gizmo"] }), /must be one of/);
  assert.match(await callError(client, "similar", {}), /exactly one of/);
  assert.match(await callError(client, "revise", { node: "fact:lmdb-fast", hypothesis: "x" }),
               /give either "node" or "hypothesis"/);
  assert.match(await callError(client, "context", {}), /give "seeds" \(memory keys\), "question" or both/);
  assert.match(await callError(client, "path", { from: "fact:lmdb-fast", to: "module:store", relations: ["nope"] }),
               /nope/);
  assert.match(await callError(client, "consolidate", { execute: true, as_of: 1 }), /as_of/);
  assert.match(await callError(client, "export_snapshot", { path: "nonexistent-dir/x.amem" }),
               /does not exist/);
  assert.match(await callError(client, "export_snapshot", { path: "/tmp/x.amem" }),
               /relative to the export directory/);
  assert.match(await callError(client, "text_search", { query: "LMDB", as_of: 1, at: 5 }), /not both/);
});

test("live view: a query right after a write (own or another process's) answers as a full export", async (t) => {
  // The server reads base + delta (docs/STORE.md §10): each answer after a write
  // must equal the CLI's on a fresh full export of the same revision.
  const dir = tempDir(t);
  const store = join(dir, "store");
  const client = await amemClient(t, store);
  const strip = (v) => JSON.parse(JSON.stringify(v, (k, x) => (k === "index" || k === "revision" ? undefined : x)));
  for (let round = 0; round < 6; ++round) {
    await call(client, "create_entities", { entities: [
      { name: `live-${round}`, entityType: "module", observations: [`retry cache policy round ${round}`] }] });
    if (round > 0) {
      await call(client, "create_relations", { relations: [
        { from: `live-${round}`, to: `live-${round - 1}`, relationType: "depends_on" }] });
    }
    // Another process writes too; the server must see it on its next call. Its word
    // is letters only: a digit would split off a part shared with other rounds.
    const word = `cliwrite${String.fromCharCode(97 + round)}`;
    execFileSync(AMEM, ["--store", store, "put-node", `fact:cli-${round}`, "--type", "fact",
                        "--content", `retry written by the cli ${word}`]);
    const full = join(dir, `full-${round}.amem`);
    execFileSync(AMEM, ["--store", store, "export", full]);
    const found = await call(client, "search_nodes", { query: `live-${round}` });
    assert.equal(found.entities.length, 1);
    const ts = await call(client, "text_search", { query: "retry cache" });
    assert.deepEqual(strip(ts), strip(amemCli(store, "text-search", "retry cache", "--snapshot", full)));
    const seen = await call(client, "text_search", { query: word });
    assert.deepEqual(seen.results.map((r) => r.key), [`fact:cli-${round}`], "the other process's write is seen");
    const ctx = await call(client, "context", { seeds: [`entity:live-${round}`] });
    const cli = amemCli(store, "context", `entity:live-${round}`, "--snapshot", full);
    assert.deepEqual(strip(ctx).nodes, strip(cli).nodes);
  }
});
