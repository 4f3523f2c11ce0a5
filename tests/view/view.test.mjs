// Headless Chromium opens the pages `amem view` writes (docs/VIEW.md) from file://
// with every request other than the page itself blocked, and checks what a person
// sees: the rendered node and edge counts equal the answer's, a click shows a
// node's record, the search box finds what it should, hostile stored strings stay
// text, nothing is requested and the console shows no error. Screenshots are saved
// in $AMEM_VIEW_ARTIFACTS and checked not to be blank. The Mermaid views are rendered
// by Mermaid ($AMEM_MERMAID_JS, run_node_tests.sh fetches it).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, statSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, dirname } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import puppeteer from 'puppeteer-core';

const amem = process.env.AMEM_BINARY;
const artifacts = process.env.AMEM_VIEW_ARTIFACTS;
const data = join(dirname(fileURLToPath(import.meta.url)), '..', 'data');
let dir, store, browser;

function run(...args) {
  return execFileSync(amem, ['--store', store, ...args], { encoding: 'utf8' });
}

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'amem-view-'));
  store = join(dir, '.amem');
  run('init');
  const steps = [['1-explore.jsonl', '1700000000', 'run-1'], ['2-correct.jsonl', '1700000600', 'run-1'],
                 ['3-next-run.jsonl', '1700003600', 'run-2']];
  for (const [file, ts, r] of steps) {
    run('ingest', join(data, 'demo', file), '--ts', ts, '--run', r, '--scope', 'amem');
  }
  run('ingest', join(data, 'view', 'impact-extra.jsonl'), '--ts', '1700007200', '--run', 'run-3',
      '--scope', 'amem');
  run('ingest', join(data, 'view', 'hostile.jsonl'), '--ts', '1700010800');
  // A 500-node impact: fact:big-root with dependents 8 to a node, four levels deep.
  const lines = ['{"op":"node","key":"fact:big-root","type":"fact","content":"the root"}'];
  for (let k = 0; k < 500; k++) {
    const parent = k < 8 ? 'fact:big-root' : `inference:big-${Math.floor((k - 8) / 8)}`;
    lines.push(JSON.stringify({ op: 'node', key: `inference:big-${k}`, type: k % 5 ? 'inference' : 'decision',
                                content: `dependent ${k}` }));
    lines.push(JSON.stringify({ op: 'edge', src: `inference:big-${k}`, rel: 'caused_by', dst: parent }));
  }
  writeFileSync(join(dir, 'big.jsonl'), lines.join('\n') + '\n');
  run('ingest', join(dir, 'big.jsonl'), '--ts', '1700014400');
  browser = await puppeteer.launch({
    executablePath: process.env.AMEM_CHROMIUM || '/usr/bin/chromium',
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--window-size=1200,800'],
    defaultViewport: { width: 1200, height: 800 },
  });
});

after(async () => {
  if (browser) await browser.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

// Opens `file` with the network cut off: returns the page plus the requests it
// tried and the console errors it showed.
async function open(file) {
  const page = await browser.newPage();
  const url = pathToFileURL(file).href;
  const requests = [], errors = [];
  await page.evaluateOnNewDocument(() => {
    window.__violations = 0;
    document.addEventListener('securitypolicyviolation', () => { window.__violations++; });
  });
  await page.setRequestInterception(true);
  page.on('request', (req) => {
    if (req.url() === url) return req.continue();
    requests.push(req.url());
    return req.abort();
  });
  page.on('console', (msg) => { if (msg.type() === 'error') errors.push(msg.text()); });
  page.on('pageerror', (err) => errors.push(String(err)));
  await page.goto(url, { waitUntil: 'load' });
  await page.waitForSelector('body[data-rendered]', { timeout: 60000 });
  return { page, requests, errors };
}

async function rendered(page) {
  return page.evaluate(() => ({ nodes: window.amemView.cy.nodes().length,
                                edges: window.amemView.cy.edges().length }));
}

// Clicks the node with `key` where it is drawn; returns the details panel's text.
async function clickNode(page, key) {
  const at = await page.evaluate((k) => {
    const node = window.amemView.cy.nodes().filter((n) => n.data('label') === k)[0];
    const p = node.renderedPosition();
    const box = document.getElementById('cy').getBoundingClientRect();
    return { x: box.left + p.x, y: box.top + p.y };
  }, key);
  await page.mouse.click(at.x, at.y);
  return page.$eval('#details', (d) => d.textContent);
}

// The share of the graph canvases' pixels that are drawn (not transparent).
async function drawnShare(page) {
  return page.evaluate(() => {
    let drawn = 0, total = 0;
    for (const c of document.querySelectorAll('#cy canvas')) {
      if (!c.width || !c.height) continue;
      const px = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
      for (let i = 3; i < px.length; i += 4) { total++; if (px[i] > 0) drawn++; }
    }
    return total ? drawn / total : 0;
  });
}

async function screenshot(page, name) {
  const path = join(artifacts, name);
  await page.screenshot({ path });
  assert.ok(statSync(path).size > 20000, `${name} is too small to hold a drawing`);
  assert.ok(await drawnShare(page) > 0.005, `${name}: the graph canvas is blank`);
}

test('an impact page shows the answer, its details and its search, offline', async () => {
  const file = join(dir, 'impact.html');
  run('view', 'impact', 'fact:lmdb-one-writer', '--out', file);
  const answer = JSON.parse(run('impact', 'fact:lmdb-one-writer', '--json'));
  const graphml = run('view', 'impact', 'fact:lmdb-one-writer', '--format', 'graphml');
  const { page, requests, errors } = await open(file);
  const counts = await rendered(page);
  assert.equal(counts.nodes, answer.dependents.length + 1);
  assert.equal(counts.edges, (graphml.match(/<edge /g) || []).length);
  assert.ok(counts.edges >= answer.dependents.length);
  const header = await page.$eval('#title', (h) => h.textContent);
  assert.equal(header, 'amem view impact fact:lmdb-one-writer');
  const source = await page.$eval('#source', (h) => h.textContent);
  // The store's latest revision (the 500-node ingest) and its commit time.
  assert.match(source, /^revision 6, committed 2023-11-15T02:13:20Z · \d+ nodes, \d+ edges · drawn with cytoscape@/);

  const details = await clickNode(page, 'decision:one-ingest-process');
  assert.match(details, /key: decision:one-ingest-process/);
  assert.match(details, /confidence: 0\.9/);
  assert.match(details, /run: run-3/);
  assert.match(details, /depth: 1/);
  assert.match(details, /created: 2023-11-15T00:13:20Z/);
  assert.match(details, /revision: 4/);  // the fourth ingest wrote it
  assert.match(details, /Run ingest from one process at a time/);

  await page.type('#search', 'inference:');
  const status = await page.$eval('#status', (s) => s.textContent);
  const expected = answer.dependents.filter((d) => d.key.startsWith('inference:')).length;
  assert.equal(status, `${expected} matches`);
  await page.$eval('#search', (s) => { s.value = ''; s.dispatchEvent(new Event('input')); });
  await screenshot(page, 'impact.png');
  assert.deepEqual(requests, []);
  assert.deepEqual(errors, []);
  await page.close();
});

test('hostile keys and contents render as text and run nothing', async () => {
  const file = join(dir, 'hostile.html');
  run('view', 'traverse', 'fact:plain', '--direction', 'both', '--out', file);
  const { page, requests, errors } = await open(file);
  assert.deepEqual(await rendered(page), { nodes: 3, edges: 2 });
  const key = 'fact:</script><img src=x onerror="window.__pwned=1">';
  const details = await clickNode(page, key);
  assert.ok(details.includes('key: ' + key), details);
  assert.ok(details.includes('</script><script>window.__pwned=2</script> & <b>bold</b> \u2028line'));
  const state = await page.evaluate(() => ({ pwned: window.__pwned, images: document.images.length,
                                             scripts: document.scripts.length,
                                             bold: document.querySelectorAll('b').length }));
  assert.equal(state.pwned, undefined);
  assert.equal(state.images, 0);
  assert.equal(state.scripts, 3);  // the data block, the library, the page's script
  assert.ok(state.bold > 0 && details.includes('<b>bold</b>'));
  const odd = await clickNode(page, 'decision:a"b]c[d{e}-->f|g`h#i;j\\k\nl');
  assert.ok(odd.includes('graph TD; A-->B'));
  await page.type('#search', '</');  // the key above, and the odd node's content
  assert.equal(await page.$eval('#status', (s) => s.textContent), '2 matches');
  await screenshot(page, 'hostile.png');
  assert.deepEqual(requests, []);
  assert.deepEqual(errors, []);
  await page.close();
});

// Renders Mermaid text with Mermaid itself (the renderer GitHub uses for mermaid
// blocks, pinned in mermaid.lock) in a blank page, as GitHub does with strict
// security: the drawn nodes and edges, their label texts, and what the labels
// might have planted.
async function renderMermaid(text) {
  const page = await browser.newPage();
  const errors = [];
  page.on('pageerror', (err) => errors.push(String(err)));
  const blank = join(dir, 'blank.html');
  writeFileSync(blank, '<!doctype html><meta charset="utf-8"><body></body>');
  await page.goto(pathToFileURL(blank).href);
  await page.addScriptTag({ path: process.env.AMEM_MERMAID_JS });
  const out = await page.evaluate(async (t) => {
    window.mermaid.initialize({ startOnLoad: false, securityLevel: 'strict' });
    const { svg } = await window.mermaid.render('amem', t);
    const holder = document.createElement('div');
    holder.innerHTML = svg;
    document.body.appendChild(holder);
    return { nodes: holder.querySelectorAll('g.node').length,
             edges: holder.querySelectorAll('path.flowchart-link').length,
             labels: [...holder.querySelectorAll('g.node')].map((n) => n.textContent),
             images: holder.querySelectorAll('img').length,
             scripts: holder.querySelectorAll('script').length,
             pwned: window.__pwned };
  }, text);
  await page.close();
  return { ...out, errors };
}

test('Mermaid renders the Mermaid views, hostile labels as their text', async () => {
  const answer = JSON.parse(run('impact', 'fact:lmdb-one-writer', '--json'));
  const graphml = run('view', 'impact', 'fact:lmdb-one-writer', '--format', 'graphml');
  const impact = await renderMermaid(run('view', 'impact', 'fact:lmdb-one-writer', '--format', 'mermaid'));
  assert.deepEqual(impact.errors, []);
  assert.equal(impact.nodes, answer.dependents.length + 1);
  assert.equal(impact.edges, (graphml.match(/<edge /g) || []).length);
  assert.ok(impact.labels.includes('fact:lmdb-one-writer(fact)'), impact.labels.join('\n'));

  const hostile = await renderMermaid(run('view', 'traverse', 'fact:plain', '--direction', 'both',
                                          '--format', 'mermaid'));
  assert.deepEqual(hostile.errors, []);
  assert.equal(hostile.nodes, 3);
  assert.equal(hostile.edges, 2);
  // Every key reads back exactly (a newline in a key is drawn as a space).
  assert.deepEqual(hostile.labels.sort(), [
    'decision:a"b]c[d{e}-->f|g`h#i;j\\k l(decision)',
    'fact:</script><img src=x onerror="window.__pwned=1">(fact)',
    'fact:plain(fact)',
  ]);
  assert.equal(hostile.images, 0);
  assert.equal(hostile.scripts, 0);
  assert.equal(hostile.pwned, undefined);
});

test('a 500-node impact stays drawable, and the filters hide what they should', async () => {
  const file = join(dir, 'big.html');
  run('view', 'impact', 'fact:big-root', '--depth', '10', '--limit', '1000', '--out', file);
  const { page, requests, errors } = await open(file);
  assert.deepEqual(await rendered(page), { nodes: 501, edges: 500 });
  await page.select('#type', 'decision');
  const shown = await page.evaluate(() => window.amemView.cy.nodes(':visible').length);
  assert.equal(shown, 100);
  await page.select('#type', '');
  // Every node is inside the drawing area once the layout is fitted.
  const inside = await page.evaluate(() => {
    const cy = window.amemView.cy, w = cy.width(), h = cy.height();
    return cy.nodes().every((n) => {
      const p = n.renderedPosition();
      return p.x >= 0 && p.y >= 0 && p.x <= w && p.y <= h;
    });
  });
  assert.ok(inside);
  await screenshot(page, 'impact-500.png');
  assert.deepEqual(requests, []);
  assert.deepEqual(errors, []);
  await page.close();
});

test('the page runs under its own Content-Security-Policy and loads nothing', async () => {
  const file = join(dir, 'all.html');
  run('view', '--all', '--out', file);
  const html = readFileSync(file, 'utf8');
  assert.match(html, /<meta http-equiv="Content-Security-Policy" content="default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'">/);
  const { page, requests, errors } = await open(file);
  const violations = await page.evaluate(() => window.__violations || 0);
  assert.equal(violations, 0);
  const counts = await rendered(page);
  const stats = JSON.parse(run('stats', '--json'));
  assert.equal(counts.nodes, stats.live_nodes);
  assert.equal(counts.edges, stats.live_edges);
  assert.deepEqual(requests, []);
  assert.deepEqual(errors, []);
  await page.close();
});
