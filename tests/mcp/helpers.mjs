// Shared by the amem MCP end-to-end tests: where the binary is, temp stores, SDK
// clients for amem and for the official memory server, and graph normalisation.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { createRequire } from "node:module";

export const AMEM = process.env.AMEM_BINARY;
if (!AMEM) throw new Error("AMEM_BINARY must name the amem binary (tests/mcp.cmake sets it)");

const here = dirname(fileURLToPath(import.meta.url));
const require = createRequire(import.meta.url);
export const OFFICIAL_SERVER = join(
  dirname(require.resolve("@modelcontextprotocol/server-memory/package.json")), "dist", "index.js");

export function tempDir(t, prefix = "amem-mcp-") {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

async function connect(t, command, args, env) {
  const transport = new StdioClientTransport({
    command, args, env: { ...process.env, ...env }, stderr: "pipe",
  });
  const client = new Client({ name: "amem-e2e", version: "1.0.0" });
  await client.connect(transport);
  t.after(() => client.close());
  return client;
}

// An SDK client connected to `amem --store DIR mcp --tools TOOLS`.
// `extra`: more arguments for `amem mcp`, e.g. ["--export-dir", dir]. `tools`: the
// profile or tool names (docs/MCP.md "Profiles"); these tests use every tool, so
// "all" unless a test is about a profile; null: no --tools (the default profile, or
// AMEM_MCP_TOOLS from `env`).
export function amemClient(t, storeDir, extra = [], tools = "all", env = {}) {
  const select = tools === null ? [] : ["--tools", tools];
  return connect(t, AMEM, ["--store", storeDir, "mcp", ...select, ...extra], env);
}

// An SDK client connected to the official server keeping its graph in `file`.
export function officialClient(t, file) {
  return connect(t, process.execPath, [OFFICIAL_SERVER], { MEMORY_FILE_PATH: file });
}

// Runs the amem CLI and returns its parsed --json output.
export function amemCli(storeDir, ...args) {
  const out = execFileSync(AMEM, ["--store", storeDir, "--json", ...args], { encoding: "utf8" });
  return JSON.parse(out);
}

export async function call(client, name, args) {
  const r = await client.callTool({ name, arguments: args });
  if (r.isError) throw new Error(`${name} failed: ${r.content[0].text}`);
  return r.structuredContent;
}

// Every page of read_graph (or search_nodes, open_nodes) merged into one graph. An
// entity too big for one page comes in parts (observationOffset > 0 continues the
// previous part); they are joined back, without the paging fields.
export async function fullGraph(client, name = "read_graph", args = {}) {
  const graph = { entities: [], relations: [] };
  let cursor;
  do {
    const page = await call(client, name, cursor ? { ...args, cursor } : args);
    for (const e of page.entities) {
      const last = graph.entities[graph.entities.length - 1];
      if (e.observationOffset > 0 && last?.name === e.name) {
        last.observations.push(...e.observations);
      } else {
        const { truncated, observationCount, observationOffset, truncatedObservations, ...entity } = e;
        graph.entities.push(entity);
      }
    }
    graph.relations.push(...page.relations);
    cursor = page.nextCursor;
  } while (cursor);
  return graph;
}

// A graph in a canonical form: entities by name with sorted observations,
// relations sorted; order is not part of the comparison.
export function canonical(graph) {
  const key = (r) => JSON.stringify([r.from, r.to, r.relationType]);
  return {
    entities: graph.entities
      .map((e) => ({ name: e.name, entityType: e.entityType,
                     observations: [...e.observations].sort() }))
      .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)),
    relations: graph.relations
      .map((r) => ({ from: r.from, to: r.to, relationType: r.relationType }))
      .sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0)),
  };
}

export { here };
