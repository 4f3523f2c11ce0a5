// The script of an `amem view` HTML page (docs/VIEW.md), compiled into amem by
// tools/view/view.cmake. It reads the subgraph from the JSON block #amem-data and
// draws it with the embedded cytoscape; every stored string reaches the page as
// text (textContent, cytoscape labels), never as markup.
(function () {
  'use strict';
  var data = JSON.parse(document.getElementById('amem-data').textContent);
  var palette = ['#4e79a7', '#f28e2b', '#59a14f', '#e15759', '#76b7b2',
                 '#edc948', '#b07aa1', '#ff9da7', '#9c755f', '#bab0ac'];
  var roleColours = {added: '#59a14f', removed: '#e15759', retracted: '#e15759',
                     updated: '#f28e2b', corrected: '#edc948', unchanged: '#bab0ac',
                     root: '#e15759', start: '#e15759'};
  function sortedValues(key, list) {
    var seen = {};
    list.forEach(function (x) { seen[x[key]] = true; });
    return Object.keys(seen).sort();
  }
  var types = sortedValues('type', data.nodes);
  var roles = sortedValues('role', data.nodes);
  var rels = sortedValues('rel', data.edges);
  var maxDepth = 0;
  data.nodes.forEach(function (n) { if (n.depth > maxDepth) maxDepth = n.depth; });
  function colourOf(n, by) {
    if (by === 'role') {
      return roleColours[n.role] || palette[roles.indexOf(n.role) % palette.length];
    }
    if (by === 'depth') {
      if (n.depth === undefined) return '#e15759';
      var t = maxDepth ? n.depth / maxDepth : 0;
      return 'hsl(' + Math.round(10 + 200 * t) + ',65%,' + Math.round(45 + 15 * t) + '%)';
    }
    return palette[types.indexOf(n.type) % palette.length];
  }
  var marked = {root: 1, start: 1, retracted: 1, changed: 1, added: 1, removed: 1};
  var elements = [];
  data.nodes.forEach(function (n) {
    elements.push({group: 'nodes', data: {id: n.id, label: n.key, type: n.type,
                                          role: n.role, marked: marked[n.role] ? 1 : 0}});
  });
  data.edges.forEach(function (e, k) {
    elements.push({group: 'edges', data: {id: 'e' + k, source: e.source, target: e.target,
                                          rel: e.rel, answer: e.answer ? 1 : 0,
                                          label: e.rel + ' ' + e.weight}});
  });
  var byId = {};
  data.nodes.forEach(function (n) { byId[n.id] = n; });

  var header = document.getElementById('title');
  header.textContent = ['amem view', data.header.query, data.header.args].filter(function (x) {
    return x;
  }).join(' ');
  document.getElementById('source').textContent =
      data.header.source + ' \u00b7 ' + data.nodes.length + ' nodes, ' + data.edges.length +
      ' edges \u00b7 drawn with ' + data.library;
  document.title = header.textContent;

  function fillSelect(id, values, all) {
    var select = document.getElementById(id);
    var opt = document.createElement('option');
    opt.value = ''; opt.textContent = all; select.appendChild(opt);
    values.forEach(function (v) {
      var o = document.createElement('option');
      o.value = v; o.textContent = v; select.appendChild(o);
    });
    return select;
  }
  var typeSelect = fillSelect('type', types, 'all types');
  var relSelect = fillSelect('rel', rels, 'all relations');
  var colourSelect = document.getElementById('colour');
  var hasDepth = data.nodes.some(function (n) { return n.depth !== undefined; });
  colourSelect.value = data.header.query === 'impact' && hasDepth ? 'depth'
      : (data.header.query === 'temporal' || data.header.query === 'revise') ? 'role' : 'type';

  var cy = cytoscape({
    container: document.getElementById('cy'),
    elements: elements,
    wheelSensitivity: 0.3,
    style: [
      {selector: 'node', style: {'label': 'data(label)', 'font-size': 10,
                                 'text-valign': 'bottom', 'text-margin-y': 3,
                                 'text-background-color': '#fff',
                                 'text-background-opacity': 0.75,
                                 'min-zoomed-font-size': 6,
                                 'width': 18, 'height': 18, 'border-width': 1,
                                 'border-color': '#333'}},
      {selector: 'node[marked = 1]', style: {'border-width': 4, 'border-color': '#111',
                                             'width': 26, 'height': 26}},
      {selector: 'edge', style: {'label': 'data(label)', 'font-size': 7, 'width': 1,
                                 'color': '#555', 'min-zoomed-font-size': 7,
                                 'text-background-color': '#fff',
                                 'text-background-opacity': 0.75,
                                 'curve-style': 'bezier', 'target-arrow-shape': 'triangle',
                                 'line-color': '#999', 'target-arrow-color': '#999',
                                 'line-style': 'dashed', 'text-rotation': 'autorotate'}},
      {selector: 'edge[answer = 1]', style: {'width': 2, 'line-style': 'solid',
                                             'line-color': '#555', 'target-arrow-color': '#555'}},
      {selector: '.dim', style: {'opacity': 0.15}},
      {selector: '.hit', style: {'border-width': 4, 'border-color': '#ff0'}},
      {selector: 'node:selected', style: {'border-width': 4, 'border-color': '#00f'}}
    ]
  });
  function paint() {
    var by = colourSelect.value;
    cy.nodes().forEach(function (node) {
      node.style('background-color', colourOf(byId[node.id()], by));
    });
    var legend = document.getElementById('legend');
    legend.textContent = '';
    var keys = by === 'role' ? roles : by === 'type' ? types : [];
    keys.forEach(function (k) {
      var item = document.createElement('span');
      item.className = 'key';
      var dot = document.createElement('i');
      dot.style.background = by === 'role' ? colourOf({role: k}, 'role')
                                           : colourOf({type: k}, 'type');
      item.appendChild(dot);
      item.appendChild(document.createTextNode(k));
      legend.appendChild(item);
    });
    if (by === 'depth') legend.textContent = 'depth 0 (red) to ' + maxDepth + ' (blue)';
  }
  function layout() {
    var roots = cy.nodes('[marked = 1]');
    var options;
    if (roots.length > 0 && cy.nodes().length > 1 && cy.nodes().length <= 150) {
      // A tree from the query's roots, one row per hop.
      options = {name: 'breadthfirst', roots: roots, directed: false, spacingFactor: 1.2,
                 animate: false};
    } else if (hasDepth) {
      // Many nodes: one ring per depth around the roots.
      options = {name: 'concentric', minNodeSpacing: 8, animate: false,
                 concentric: function (node) {
                   var d = byId[node.id()].depth;
                   return maxDepth + 1 - (d === undefined ? 0 : d);
                 },
                 levelWidth: function () { return 1; }};
    } else {
      options = {name: 'cose', animate: false, randomize: false,
                 numIter: cy.nodes().length > 200 ? 300 : 1000, nodeDimensionsIncludeLabels: true};
    }
    cy.layout(options).run();
    cy.fit(undefined, 30);
    if (cy.zoom() > 1.6) {  // a few nodes: keep labels at a readable size
      cy.zoom(1.6);
      cy.center();
    }
  }
  function filter() {
    var type = typeSelect.value, rel = relSelect.value;
    cy.batch(function () {
      cy.nodes().forEach(function (n) {
        n.style('display', !type || n.data('type') === type ? 'element' : 'none');
      });
      cy.edges().forEach(function (e) {
        e.style('display', !rel || e.data('rel') === rel ? 'element' : 'none');
      });
    });
  }
  var status = document.getElementById('status');
  function search() {
    var q = document.getElementById('search').value.toLowerCase();
    var hits = 0;
    cy.batch(function () {
      cy.elements().removeClass('dim hit');
      if (!q) return;
      cy.nodes().forEach(function (node) {
        var n = byId[node.id()];
        var hit = n.key.toLowerCase().indexOf(q) >= 0 ||
                  n.content.toLowerCase().indexOf(q) >= 0;
        node.addClass(hit ? 'hit' : 'dim');
        if (hit) hits++;
      });
      cy.edges().addClass('dim');
    });
    status.textContent = q ? hits + (hits === 1 ? ' match' : ' matches') : '';
  }
  function show(n) {
    var lines = [['key', n.key], ['id', n.hex],
                 ['type', n.type], ['role', n.role]];
    if (n.depth !== undefined) lines.push(['depth', String(n.depth)]);
    lines.push(['confidence', String(n.confidence)], ['run', n.run], ['task', n.task],
               ['scope', n.scope],
               ['created', n.created], ['updated', n.updated]);
    if (n.revision !== undefined) lines.push(['revision', String(n.revision)]);
    n.fields.forEach(function (f) {
      if (f[0] !== 'depth' && f[0] !== 'confidence') lines.push(f);
    });
    lines.push(['meta', n.meta]);
    var details = document.getElementById('details');
    details.textContent = '';
    lines.forEach(function (l) {
      var row = document.createElement('div');
      var name = document.createElement('b');
      name.textContent = l[0] + ': ';
      row.appendChild(name);
      row.appendChild(document.createTextNode(l[1]));
      details.appendChild(row);
    });
    var content = document.createElement('pre');
    content.textContent = n.content;
    details.appendChild(content);
  }
  cy.on('tap', 'node', function (evt) { show(byId[evt.target.id()]); });
  typeSelect.addEventListener('change', filter);
  relSelect.addEventListener('change', filter);
  colourSelect.addEventListener('change', paint);
  document.getElementById('search').addEventListener('input', search);
  paint();
  layout();
  window.amemView = {cy: cy, nodes: data.nodes.length, edges: data.edges.length};
  document.body.setAttribute('data-rendered', cy.nodes().length + ' ' + cy.edges().length);
})();
