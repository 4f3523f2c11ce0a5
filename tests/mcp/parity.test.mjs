// Parity with the official memory server: the same script of compatibility-tool
// calls, run against amem and against @modelcontextprotocol/server-memory, gives
// the same entities, relations and observations (order ignored). Then the
// official server's memory.jsonl, imported with `amem import-mcp-memory`, reads
// back identically (lossless migration).
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { AMEM, amemClient, officialClient, tempDir, call, fullGraph, canonical } from "./helpers.mjs";

// Each step: [tool, arguments]. Read tools are compared; writes too (their results).
const SCRIPT = [
  ["create_entities", { entities: [
    { name: "Alice", entityType: "person", observations: ["Works on the store", "Likes LMDB"] },
    { name: "store", entityType: "module", observations: ["Owns the LMDB environment"] },
    { name: "decision:use-lmdb", entityType: "decision", observations: [] },
    { name: "naïve café ☕", entityType: "place", observations: ["multi\nline observation", ""] },
    { name: "a:b#c", entityType: "weird:type", observations: ["colons: and #hashes"] },
  ] }],
  ["create_entities", { entities: [
    { name: "Alice", entityType: "robot", observations: ["ignored, Alice exists"] },
    { name: "Bob", entityType: "person", observations: ["Reviews code"] },
  ] }],
  ["create_relations", { relations: [
    { from: "Alice", to: "store", relationType: "works_at" },        // custom relation
    { from: "store", to: "decision:use-lmdb", relationType: "part_of" },  // built-in
    { from: "Alice", to: "Bob", relationType: "is friends with" },    // free-form
    { from: "Alice", to: "Bob", relationType: "Works With" },         // second on same pair
    { from: "Alice", to: "Bob", relationType: "related_to" },
    { from: "Bob", to: "Bob", relationType: "self-reviews" },         // self-loop
    { from: "naïve café ☕", to: "a:b#c", relationType: "near" },
  ] }],
  ["create_relations", { relations: [
    { from: "Alice", to: "store", relationType: "works_at" },        // exists: skipped
    { from: "Bob", to: "store", relationType: "works_at" },
  ] }],
  ["add_observations", { observations: [
    { entityName: "Alice", contents: ["Likes LMDB", "Wrote the batch API"] },
    { entityName: "Bob", contents: ["Prefers small commits"] },
  ] }],
  ["read_graph", {}],
  ["search_nodes", { query: "lmdb" }],
  ["search_nodes", { query: "PERSON" }],
  ["search_nodes", { query: "café" }],
  ["search_nodes", { query: "nothing matches this" }],
  ["open_nodes", { names: ["Alice", "missing", "store"] }],
  ["delete_observations", { deletions: [
    { entityName: "Alice", observations: ["Likes LMDB", "never there"] },
    { entityName: "ghost", observations: ["x"] },
  ] }],
  ["delete_relations", { relations: [
    { from: "Alice", to: "Bob", relationType: "is friends with" },
    { from: "Bob", to: "store", relationType: "works_at" },
    { from: "Alice", to: "Bob", relationType: "no such relation" },
  ] }],
  ["read_graph", {}],
  ["delete_entities", { entityNames: ["store", "ghost"] }],
  ["read_graph", {}],
  ["open_nodes", { names: ["Alice", "Bob", "decision:use-lmdb"] }],
  ["create_entities", { entities: [
    { name: "store", entityType: "module", observations: ["Recreated"] },
  ] }],
  ["add_observations", { observations: [{ entityName: "store", contents: ["Owns the LMDB environment"] }] }],
  ["read_graph", {}],
];

const READS = new Set(["read_graph", "search_nodes", "open_nodes"]);

function comparable(tool, result) {
  if (READS.has(tool)) return canonical(result);
  if (tool === "create_entities") return canonical({ entities: result.entities, relations: [] });
  if (tool === "create_relations") return canonical({ entities: [], relations: result.relations });
  if (tool === "add_observations") {
    return result.results.map((r) => ({ entityName: r.entityName,
                                        addedObservations: [...r.addedObservations].sort() }));
  }
  return { success: result.success };  // the delete tools: messages differ in detail
}

test("the compatibility tools behave like the official memory server", async (t) => {
  const dir = tempDir(t);
  const amem = await amemClient(t, join(dir, "store"));
  const memoryFile = join(dir, "memory.jsonl");
  const official = await officialClient(t, memoryFile);

  for (const [i, [tool, args]] of SCRIPT.entries()) {
    const a = await amem.callTool({ name: tool, arguments: args });
    const o = await official.callTool({ name: tool, arguments: args });
    assert.equal(a.isError ?? false, o.isError ?? false, `step ${i} ${tool}: isError`);
    assert.deepEqual(comparable(tool, a.structuredContent), comparable(tool, o.structuredContent),
                     `step ${i} ${tool}`);
  }
  // Both reject add_observations to a missing entity, and write nothing.
  const bad = { observations: [{ entityName: "Alice", contents: ["half"] },
                               { entityName: "nobody", contents: ["x"] }] };
  const a = await amem.callTool({ name: "add_observations", arguments: bad });
  const o = await official.callTool({ name: "add_observations", arguments: bad });
  assert.equal(a.isError, true);
  assert.equal(o.isError, true);
  assert.match(a.content[0].text, /Entity with name nobody not found/);
  assert.deepEqual(canonical(await fullGraph(amem)), canonical(await call(official, "read_graph", {})));

  // Lossless migration: the official file imported into a fresh amem store.
  const imported = join(dir, "imported");
  const summary = JSON.parse(execFileSync(
    AMEM, ["--store", imported, "--json", "import-mcp-memory", memoryFile], { encoding: "utf8" }));
  assert.ok(summary.revision > 0);
  const fresh = await amemClient(t, imported);
  assert.deepEqual(canonical(await fullGraph(fresh)), canonical(await call(official, "read_graph", {})));
  // Importing twice changes nothing.
  execFileSync(AMEM, ["--store", imported, "import-mcp-memory", memoryFile]);
  assert.deepEqual(canonical(await fullGraph(fresh)), canonical(await call(official, "read_graph", {})));
});

test("import-mcp-memory rejects a bad file naming the line and writes nothing", async (t) => {
  const dir = tempDir(t);
  const file = join(dir, "memory.jsonl");
  const { writeFileSync } = await import("node:fs");
  writeFileSync(file, [
    JSON.stringify({ type: "entity", name: "A", entityType: "t", observations: ["o"] }),
    JSON.stringify({ type: "relation", from: "A", to: "B", relationType: "r" }),
    JSON.stringify({ type: "entity", name: "C", entityType: 5, observations: [] }),
  ].join("\n"));
  let err;
  try {
    execFileSync(AMEM, ["--store", join(dir, "s"), "import-mcp-memory", file], { stdio: "pipe" });
  } catch (e) { err = e; }
  assert.ok(err, "import must fail");
  assert.equal(err.status, 4);
  assert.match(err.stderr.toString(), /line 3: entityType: expected a string/);
});
