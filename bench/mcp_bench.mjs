#!/usr/bin/env node
// MCP latency benchmark: round-trip latency of `tools/call`
// on `amem mcp` vs the official MCP memory server (@modelcontextprotocol/server-memory,
// which keeps one JSON Lines file and rewrites it whole on every write), driven by the
// same official TypeScript SDK client (@modelcontextprotocol/sdk) in the same run.
//
// Measured, per store size N (default 1,000 and 10,000 entities):
//   write         create_entities of one new entity (distinct name every call, one
//                 ~100-byte observation): a real write on both servers
//   search_nodes  a query ("topic-NNNNN") that matches ~5 entities at any N
//   search_nodes right after create_entities
//                 an untimed write of one entity, then the same search: the read an
//                 agent makes right after writing (amem: base + delta)
//   open_nodes    one entity by name (both servers)
//   context       amem's `context` for one entity; the official server has no such
//                 tool, so its column times the closest equivalent, open_nodes of the
//                 same entity (labelled as such in the output)
// Each server gets a fresh store (amem: temp --store dir; official: temp
// MEMORY_FILE_PATH) preloaded, untimed, with N entities (entityType, 2-3 observations
// of ~100 bytes of English-like text from a fixed-seed PRNG) and ~N relations, in
// chunks of create_entities / create_relations. Then every op is warmed up and timed
// call by call with process.hrtime.bigint(), alternating amem and official call by
// call (the order flips every repetition) so machine noise hits both alike. Times
// include the SDK client's work (JSON, result validation) and the stdio pipes:
// what an agent's MCP client sees. Medians and p90 are reported in microseconds.
// Any tool error (isError) or protocol error aborts with a non-zero exit before
// figures are printed.
//
// Run (installs the pinned SDK and official server into tests/mcp/node_modules):
//   bash bench/mcp_bench.sh [AMEM_BINARY] [--sizes 1000,10000] [--reps 200]
//        [--write-reps 100] [--warmup 20] [--seed 42] [--context-args JSON]
// or directly, once tests/mcp/node_modules exists:
//   node bench/mcp_bench.mjs --amem build/amem --sizes 200,1000 --reps 20
//
// --reps sets the timed calls per read op (default 200), --write-reps per write
// (default: half of --reps, so 100). --context-args overrides the arguments of amem's
// `context` call as JSON, with "$KEY" (amem's key for the entity, entity:NAME) and
// "$NAME" replaced; by default they are derived from the tool's input schema.
import { createRequire } from "node:module";
import { pathToFileURL } from "node:url";
import { mkdirSync, mkdtempSync, rmSync, readdirSync, statSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";

// The SDK and the official server come from tests/mcp/node_modules (ESM ignores
// NODE_PATH, so resolve them from that package and import the resolved files).
const testsPackage = new URL("../tests/mcp/package.json", import.meta.url);
const require = createRequire(testsPackage);
async function importFromTests(specifier) {
  let path;
  try {
    path = require.resolve(specifier);
  } catch (e) {
    throw new Error(`cannot resolve ${specifier} from tests/mcp/node_modules ` +
                    `(run bench/mcp_bench.sh, or npm ci in tests/mcp): ${e.message}`);
  }
  return import(pathToFileURL(path).href);
}
const { Client } = await importFromTests("@modelcontextprotocol/sdk/client/index.js");
const { StdioClientTransport } = await importFromTests("@modelcontextprotocol/sdk/client/stdio.js");
const OFFICIAL_PACKAGE = require.resolve("@modelcontextprotocol/server-memory/package.json");
const OFFICIAL_SERVER = join(dirname(OFFICIAL_PACKAGE), "dist", "index.js");

// ---------------------------------------------------------------- arguments

function parseArgs(argv) {
  const opts = { amem: null, sizes: [1000, 10000], reps: 200, writeReps: null, warmup: 20,
                 seed: 42, contextArgs: null };
  const usage = "usage: node bench/mcp_bench.mjs --amem PATH [--sizes 1000,10000] [--reps N] " +
                "[--write-reps N] [--warmup N] [--seed N] [--context-args JSON]";
  const int = (name, v, min) => {
    const n = Number(v);
    if (!Number.isInteger(n) || n < min) throw new Error(`${name}: expected an integer >= ${min}, got ${v}`);
    return n;
  };
  for (let i = 0; i < argv.length; ++i) {
    const arg = argv[i];
    const [flag, inline] = arg.includes("=") ? [arg.slice(0, arg.indexOf("=")), arg.slice(arg.indexOf("=") + 1)]
                                             : [arg, undefined];
    const value = () => {
      if (inline !== undefined) return inline;
      if (i + 1 >= argv.length) throw new Error(`${flag} needs a value\n${usage}`);
      return argv[++i];
    };
    switch (flag) {
      case "--amem": opts.amem = resolve(value()); break;
      case "--sizes": opts.sizes = value().split(",").map((s) => int("--sizes", s.trim(), 10)); break;
      case "--reps": opts.reps = int("--reps", value(), 1); break;
      case "--write-reps": opts.writeReps = int("--write-reps", value(), 1); break;
      case "--warmup": opts.warmup = int("--warmup", value(), 0); break;
      case "--seed": opts.seed = int("--seed", value(), 0); break;
      case "--context-args": opts.contextArgs = value(); JSON.parse(opts.contextArgs); break;
      case "-h": case "--help": console.log(usage); process.exit(0);
      default: throw new Error(`unknown argument ${arg}\n${usage}`);
    }
  }
  if (!opts.amem) throw new Error(`--amem is required\n${usage}`);
  if (opts.writeReps === null) opts.writeReps = Math.max(1, Math.round(opts.reps / 2));
  return opts;
}

// ---------------------------------------------------------------- data

// mulberry32: a small deterministic PRNG, so every run loads the same graph.
function prng(seed) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  next.int = (n) => Math.floor(next() * n);
  next.pick = (arr) => arr[next.int(arr.length)];
  return next;
}

const WORDS = (
  "the a an of to in for on with by from and or but when after before while because " +
  "store index cache query writer reader snapshot commit revision schema parser build " +
  "test module service client server request response handler thread lock file path " +
  "config flag option default error retry timeout budget token graph node edge relation " +
  "memory agent user review decision constraint procedure fix bug regression release " +
  "migration benchmark latency throughput page cursor batch transaction journal replay " +
  "uses calls returns keeps needs prefers avoids checks writes reads opens closes moves " +
  "splits merges validates rejects logs measures ships owns blocks replaces documents " +
  "fast slow small large stable flaky new old shared local remote strict lazy careful " +
  "every each some most only never always usually rarely again later first last"
).split(" ");

// ~100 bytes of English-like text: words until the sentence is long enough.
function sentence(rng, bytes = 100) {
  const words = [];
  let len = 0;
  while (len < bytes - 1) {
    const w = rng.pick(WORDS);
    words.push(w);
    len += w.length + 1;
  }
  const s = words.join(" ");
  return s[0].toUpperCase() + s.slice(1) + ".";
}

const ENTITY_TYPES = ["module", "person", "service", "concept", "file", "decision", "library"];
const RELATION_TYPES = ["depends_on", "calls", "part_of", "owned_by", "mentions"];
const pad = (n, w) => String(n).padStart(w, "0");
const entityName = (i) => `component-${pad(i, 6)}`;
// Topic codes have a fixed width, so "topic-00042" never matches "topic-000420".
const topicCode = (t) => `topic-${pad(t, 5)}`;

// N entities with 2-3 observations each (the first carries a topic code shared by
// ~5 entities, for search_nodes), and ~N distinct relations.
function makeGraph(n, seed) {
  const rng = prng(seed);
  const topics = Math.max(1, Math.floor(n / 5));
  const topicCount = new Map();
  const entities = [];
  for (let i = 0; i < n; ++i) {
    const topic = i % topics;
    topicCount.set(topic, (topicCount.get(topic) ?? 0) + 1);
    const observations = [`${sentence(rng, 85)} See ${topicCode(topic)}.`];
    const k = 2 + rng.int(2);
    while (observations.length < k) observations.push(sentence(rng));
    entities.push({ name: entityName(i), entityType: ENTITY_TYPES[i % ENTITY_TYPES.length], observations });
  }
  const relations = [];
  const seen = new Set();
  for (let i = 0; i < n && n > 1; ++i) {
    let j = rng.int(n - 1);
    if (j >= i) ++j;  // no self-loops
    const relationType = rng.pick(RELATION_TYPES);
    const key = `${i} ${j} ${relationType}`;
    if (seen.has(key)) continue;
    seen.add(key);
    relations.push({ from: entityName(i), to: entityName(j), relationType });
  }
  return { entities, relations, topics, topicCount };
}

// ---------------------------------------------------------------- servers

const PRELOAD_TIMEOUT_MS = 600_000;

// One MCP server behind an SDK client; stderr is drained (a full pipe would stall
// the server) and its tail kept for error messages.
class Server {
  constructor(label) {
    this.label = label;
    this.stderr = "";
    this.client = null;
    this.tools = new Map();
  }

  async connect(command, args, env) {
    const transport = new StdioClientTransport({ command, args, env: { ...process.env, ...env },
                                                 stderr: "pipe" });
    transport.stderr?.on("data", (d) => { this.stderr = (this.stderr + d).slice(-4000); });
    this.client = new Client({ name: "amem-mcp-bench", version: "1.0.0" });
    await this.client.connect(transport);
    // Listing the tools also lets the client validate structuredContent against each
    // tool's outputSchema, as agents' clients do; both servers get the same treatment.
    const { tools } = await this.client.listTools();
    for (const t of tools) this.tools.set(t.name, t);
  }

  // tools/call; any tool error (isError) or protocol error throws.
  async call(name, args, timeout) {
    let r;
    try {
      r = await this.client.callTool({ name, arguments: args }, undefined, timeout ? { timeout } : {});
    } catch (e) {
      throw new Error(`${this.label}: ${name} failed: ${e.message}${this.stderrTail()}`);
    }
    if (r.isError) {
      const text = r.content?.map((c) => c.text ?? "").join(" ") ?? "";
      throw new Error(`${this.label}: ${name} returned isError: ${text.slice(0, 500)}${this.stderrTail()}`);
    }
    return r;
  }

  stderrTail() {
    return this.stderr.trim() ? `\n--- ${this.label} stderr (tail) ---\n${this.stderr.trim()}` : "";
  }

  async close() {
    if (this.client) await this.client.close().catch(() => {});
    this.client = null;
  }
}

function structured(r) {
  if (r.structuredContent) return r.structuredContent;
  const text = r.content?.find((c) => c.type === "text")?.text;
  return text ? JSON.parse(text) : {};
}

// Loads the graph through the compatibility tools, checking every entity and relation
// was created. Returns the wall time in ms (untimed for the results).
// How many items a create_* result reports: amem lists the first ones of a big echo
// and gives the count in `total` (truncated: true) to stay within its token budget.
function created(r, field) {
  return r.truncated ? r.total : (r[field]?.length ?? -1);
}

async function preload(server, graph) {
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < graph.entities.length; i += 500) {
    const chunk = graph.entities.slice(i, i + 500);
    const r = structured(await server.call("create_entities", { entities: chunk }, PRELOAD_TIMEOUT_MS));
    if (created(r, "entities") !== chunk.length) {
      throw new Error(`${server.label}: create_entities created ${created(r, "entities")} of ${chunk.length}`);
    }
  }
  for (let i = 0; i < graph.relations.length; i += 1000) {
    const chunk = graph.relations.slice(i, i + 1000);
    const r = structured(await server.call("create_relations", { relations: chunk }, PRELOAD_TIMEOUT_MS));
    if (created(r, "relations") !== chunk.length) {
      throw new Error(`${server.label}: create_relations created ${created(r, "relations")} of ${chunk.length}`);
    }
  }
  return Number(process.hrtime.bigint() - t0) / 1e6;
}

// The arguments of amem's `context` call for entity NAME (amem key entity:NAME):
// --context-args if given, else derived from the tool's input schema (a seed list or
// a single seed/node/key property).
function contextArgsFor(tool, name, override) {
  const key = `entity:${name}`;
  if (override) {
    return JSON.parse(override, (_, v) => (typeof v === "string" ? v.replaceAll("$KEY", key).replaceAll("$NAME", name) : v));
  }
  const props = tool.inputSchema?.properties ?? {};
  const required = tool.inputSchema?.required ?? [];
  const preferred = ["seeds", "seed", "nodes", "node", "keys", "key", "target", "focus", "query"];
  const field = preferred.find((p) => p in props) ?? required[0];
  if (!field) throw new Error("amem's context tool has no argument to name the entity; pass --context-args");
  return { [field]: props[field]?.type === "array" ? [key] : key };
}

// Bytes allocated on disk under `path` (LMDB's map file is sparse: its size is not).
function dirBytes(path) {
  let total = 0;
  for (const e of readdirSync(path, { withFileTypes: true })) {
    const p = join(path, e.name);
    total += e.isDirectory() ? dirBytes(p) : statSync(p).blocks * 512;
  }
  return total;
}

// ---------------------------------------------------------------- timing

const nowNs = () => process.hrtime.bigint();
const micros = (ns) => Number(ns) / 1000;

function stats(samples) {
  const s = [...samples].sort((a, b) => a - b);
  const at = (q) => s[Math.min(s.length - 1, Math.max(0, Math.ceil(q * s.length) - 1))];
  return { median: s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2,
           p90: at(0.9), n: s.length };
}

// Runs `reps` timed repetitions of op(server, rep) on both servers, alternating which
// goes first; `check` validates each result (outside the timed region).
async function timeOp(servers, reps, op, check) {
  const samples = servers.map(() => []);
  for (let rep = 0; rep < reps; ++rep) {
    const order = rep % 2 === 0 ? [0, 1] : [1, 0];
    for (const k of order) {
      const { name, args, before } = op(k, rep);
      if (before) await servers[k].call(before.name, before.args);  // untimed
      const t0 = nowNs();
      const r = await servers[k].call(name, args);
      const t1 = nowNs();
      samples[k].push(micros(t1 - t0));
      check?.(k, rep, structured(r));
    }
  }
  return samples.map(stats);
}

// ---------------------------------------------------------------- main

function fmtUs(x) { return x === undefined ? "n/a" : Math.round(x).toLocaleString("en-US"); }
function fmtMB(bytes) { return `${(bytes / 1e6).toFixed(1)} MB`; }

async function benchSize(opts, n, cleanup) {
  const graph = makeGraph(n, opts.seed + n);
  const dir = mkdtempSync(join(tmpdir(), "amem-mcp-bench-"));
  cleanup.push(() => rmSync(dir, { recursive: true, force: true }));
  const amemStore = join(dir, "amem-store");
  const officialFile = join(dir, "official", "memory.jsonl");
  mkdirSync(dirname(officialFile));

  const amem = new Server("amem");
  const official = new Server("official");
  cleanup.push(() => amem.close(), () => official.close());
  await amem.connect(opts.amem, ["--store", amemStore, "mcp", "--tools", "all"], {});
  await official.connect(process.execPath, [OFFICIAL_SERVER], { MEMORY_FILE_PATH: officialFile });
  const servers = [amem, official];

  const observations = graph.entities.reduce((s, e) => s + e.observations.length, 0);
  console.log(`\n== N = ${n.toLocaleString("en-US")} entities (${observations.toLocaleString("en-US")} ` +
              `observations, ${graph.relations.length.toLocaleString("en-US")} relations) ==`);
  const loadMs = [await preload(amem, graph), await preload(official, graph)];
  console.log(`preload (untimed for results): amem ${(loadMs[0] / 1000).toFixed(1)} s, ` +
              `official ${(loadMs[1] / 1000).toFixed(1)} s; on disk: amem store ${fmtMB(dirBytes(amemStore))} allocated, ` +
              `official memory.jsonl ${fmtMB(statSync(officialFile).size)}`);

  const rng = prng(opts.seed * 7919 + n);
  const contextTool = amem.tools.get("context");
  let writeSeq = 0;
  // Each op: (server index, rep) -> {name, args}. Reads pick their target with the
  // same PRNG draw for both servers (drawn once per rep).
  const pickTopic = [], pickEntity = [];
  const draw = (arr, rep, n) => { while (arr.length <= rep) arr.push(rng.int(n)); return arr[rep]; };
  const ops = {
    write: () => ({ name: "create_entities", args: { entities: [{
      name: `bench-note-${pad(writeSeq++, 7)}`, entityType: "note",
      observations: [sentence(rng)] }] } }),
    search_nodes: (k, rep) => ({ name: "search_nodes", args: { query: topicCode(draw(pickTopic, rep, graph.topics)) } }),
    // A write (untimed) and then search_nodes: the read an agent makes right after
    // writing, which on amem reads base + delta (docs/STORE.md §10).
    search_after_write: (k, rep) => ({ ...ops.search_nodes(k, rep), before: ops.write() }),
    open_nodes: (k, rep) => ({ name: "open_nodes", args: { names: [entityName(draw(pickEntity, rep, n))] } }),
    context: (k, rep) => {
      const name = entityName(draw(pickEntity, rep, n));
      return k === 0 ? { name: "context", args: contextArgsFor(contextTool, name, opts.contextArgs) }
                     : { name: "open_nodes", args: { names: [name] } };
    },
  };
  // Result checks, so a run that silently returns nothing cannot print figures.
  const checks = {
    write: (k, rep, r) => {
      if (r.entities?.length !== 1) throw new Error(`${servers[k].label}: write created ${r.entities?.length} entities`);
    },
    search_nodes: (k, rep, r) => {
      const want = graph.topicCount.get(pickTopic[rep]);
      if (r.entities?.length !== want) {
        throw new Error(`${servers[k].label}: search_nodes ${topicCode(pickTopic[rep])} found ${r.entities?.length}, want ${want}`);
      }
    },
    open_nodes: (k, rep, r) => {
      const want = graph.entities[pickEntity[rep]];
      if (r.entities?.length !== 1 || r.entities[0].observations?.length !== want.observations.length) {
        throw new Error(`${servers[k].label}: open_nodes ${want.name} gave ${JSON.stringify(r).slice(0, 200)}`);
      }
    },
  };
  checks.context = (k, rep, r) => { if (k === 1) checks.open_nodes(k, rep, r); };
  checks.search_after_write = checks.search_nodes;

  const plan = [
    ["search_nodes", opts.reps], ["open_nodes", opts.reps],
    ...(contextTool ? [["context", opts.reps]] : []),
    // The writes add entities without topic codes, so the searches' counts hold.
    ["search_after_write", opts.writeReps],
    ["write", opts.writeReps],
  ];
  if (!contextTool) console.log("context: SKIPPED, this amem binary has no `context` MCP tool");
  const results = {};
  for (const [name, reps] of plan) {
    // Warm-up uses its own draws (rep indices past the timed ones) and is discarded.
    if (opts.warmup > 0) {
      await timeOp(servers, opts.warmup, (k, rep) => ops[name](k, reps + rep), (k, rep, r) => checks[name](k, reps + rep, r));
    }
    results[name] = await timeOp(servers, reps, ops[name], checks[name]);
  }
  const writeFileBytes = statSync(officialFile).size;

  console.log(`${"op".padEnd(40)} ${"amem med".padStart(10)} ${"amem p90".padStart(10)} ` +
              `${"official med".padStart(13)} ${"official p90".padStart(13)}   (µs, ${opts.reps} reads / ${opts.writeReps} writes per op)`);
  for (const [name] of plan) {
    const [a, o] = results[name];
    console.log(`${opLabel(name).padEnd(40)} ${fmtUs(a.median).padStart(10)} ${fmtUs(a.p90).padStart(10)} ` +
                `${fmtUs(o.median).padStart(13)} ${fmtUs(o.p90).padStart(13)}`);
  }
  console.log(`official memory.jsonl after the writes: ${fmtMB(writeFileBytes)} (rewritten whole on every write)`);

  await amem.close();
  await official.close();
  rmSync(dir, { recursive: true, force: true });
  return results;
}

function opLabel(name) {
  return {
    write: "write (create_entities, 1 entity)",
    search_nodes: "search_nodes (~5 hits)",
    search_after_write: "search_nodes right after create_entities",
    open_nodes: "open_nodes (1 entity)",
    context: "context (official: open_nodes*)",
  }[name];
}

async function main() {
  const opts = parseArgs(process.argv.slice(2));
  const pins = JSON.parse(readFileSync(testsPackage, "utf8")).devDependencies ?? {};
  const officialVersion = JSON.parse(readFileSync(OFFICIAL_PACKAGE, "utf8")).version;
  console.log("amem MCP latency benchmark: tools/call round trips through the official SDK client");
  console.log(`amem: ${opts.amem}`);
  console.log(`official: @modelcontextprotocol/server-memory ${officialVersion}; client: ` +
              `@modelcontextprotocol/sdk ${pins["@modelcontextprotocol/sdk"] ?? "?"}; node ${process.version}`);
  console.log(`sizes ${opts.sizes.join(", ")}; ${opts.reps} timed calls per read op, ${opts.writeReps} per ` +
              `write, ${opts.warmup} warm-up calls per op; seed ${opts.seed}`);

  const cleanup = [];
  const all = new Map();
  try {
    for (const n of opts.sizes) all.set(n, await benchSize(opts, n, cleanup));
  } finally {
    for (const f of cleanup.reverse()) await f();
  }

  // The summary: how each op scales from the smallest to the largest size.
  const names = ["write", "search_nodes", "search_after_write", "open_nodes", "context"];
  console.log("\n## Summary: median tools/call round trip (µs)\n");
  console.log("| op | N | amem median | official median | official/amem |");
  console.log("|---|---:|---:|---:|---:|");
  for (const name of names) {
    for (const n of opts.sizes) {
      const r = all.get(n)[name];
      if (!r) {
        console.log(`| ${opLabel(name)} | ${n.toLocaleString("en-US")} | n/a (this amem has no context tool) | | |`);
        continue;
      }
      const [a, o] = r;
      console.log(`| ${opLabel(name)} | ${n.toLocaleString("en-US")} | ${fmtUs(a.median)} | ${fmtUs(o.median)} | ` +
                  `${(o.median / a.median).toFixed(1)}x |`);
    }
  }
  if (opts.sizes.length > 1) {
    const lo = opts.sizes[0], hi = opts.sizes[opts.sizes.length - 1];
    console.log(`\nScaling ${lo.toLocaleString("en-US")} -> ${hi.toLocaleString("en-US")} entities (median at N=${hi} / median at N=${lo}):`);
    for (const name of names) {
      const a = all.get(lo)[name], b = all.get(hi)[name];
      if (!a || !b) continue;
      console.log(`  ${opLabel(name).padEnd(40)} amem ${(b[0].median / a[0].median).toFixed(1)}x, ` +
                  `official ${(b[1].median / a[1].median).toFixed(1)}x`);
    }
  }
  if (all.get(opts.sizes[0]).context) {
    console.log("\n* The official server has no `context` tool: its column times open_nodes of the same " +
                "entity, the closest equivalent (the entity and its relations, no neighbourhood).");
  }
}

try {
  await main();
} catch (e) {
  console.error(`FAIL: ${e.message}`);
  process.exit(1);
}
