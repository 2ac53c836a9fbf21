(function () {
  'use strict';
  var FOLD = 20;
  var S = { index: null, frags: {}, waiting: {}, failed: {} };
  var view = document.getElementById('view');
  var crumbs = document.getElementById('crumbs');

  // Elements are built with textContent only: no text of a trajectory is ever read as HTML.
  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  }
  function add(parent) {
    for (var i = 1; i < arguments.length; i++) if (arguments[i]) parent.appendChild(arguments[i]);
    return parent;
  }
  // Appends one child and returns the child.
  function put(parent, child) {
    parent.appendChild(child);
    return child;
  }
  function link(text, hash) {
    var a = el('a', null, text);
    a.href = hash;
    return a;
  }
  function enc(s) { return encodeURIComponent(s); }
  function cellParam(t, c) { return enc(t) + '/' + enc(c); }
  function keyParam(key) { return (Array.isArray(key) ? key : key.split('/')).map(enc).join('/'); }
  function hash(p) {
    var parts = [];
    if (p.cell) parts.push('cell=' + cellParam(p.cell[0], p.cell[1]));
    if (p.task !== undefined) parts.push('task=' + enc(p.task));
    if (p.point !== undefined) parts.push('point=' + enc(p.point));
    if (p.ep) parts.push('ep=' + keyParam(p.ep));
    if (p.base !== undefined) parts.push('base=' + enc(p.base));
    return '#' + parts.join('&');
  }
  function params() {
    var p = {};
    location.hash.replace(/^#/, '').split('&').forEach(function (kv) {
      var i = kv.indexOf('=');
      if (i <= 0) return;
      var k = kv.slice(0, i), v = kv.slice(i + 1);
      try {
        if (k === 'cell' || k === 'ep') p[k] = v.split('/').map(decodeURIComponent);
        else p[k] = decodeURIComponent(v);
      } catch (e) { /* a malformed part is ignored */ }
    });
    if (p.ep) p.cell = [p.ep[0], p.ep[1]];
    return p;
  }
  function keyOf(l) {
    var k = [l.target, l.condition, l.task, 'r' + l.round, 's' + l.sample].join('/');
    if (l.fork) k += '/fork@' + l.fork.step + '/' + (l.fork.message ? 'message' : 'silent');
    return k;
  }
  function pct(a, n) { return n ? (100 * a / n).toFixed(0) + ' %' : '—'; }

  function findCell(t, c) {
    var cells = S.index.cells;
    for (var i = 0; i < cells.length; i++) if (cells[i].target === t && cells[i].condition === c) return cells[i];
    return null;
  }
  function findGroup(cell, task) {
    if (!cell) return null;
    var ti = S.index.tasks.indexOf(task);
    for (var i = 0; i < cell.tasks.length; i++) if (cell.tasks[i].task === ti) return cell.tasks[i];
    return null;
  }
  function load(id, done) {
    if (S.frags[id]) return done(S.frags[id]);
    if (S.failed[id]) return done(null);
    if (S.waiting[id]) { S.waiting[id].push(done); return; }
    S.waiting[id] = [done];
    var s = document.createElement('script');
    s.src = 'f/' + id + '.js';
    s.onerror = function () {
      S.failed[id] = true;
      var w = S.waiting[id] || [];
      delete S.waiting[id];
      w.forEach(function (f) { f(null); });
    };
    document.head.appendChild(s);
  }
  window.TrapViewer = {
    index: function (ix) {
      S.index = ix;
      document.getElementById('title').textContent = 'TrapArena episodes: ' + ix.title;
      document.title = 'Episodes: ' + ix.title;
      route();
    },
    fragment: function (id, data) {
      S.frags[id] = data;
      var w = S.waiting[id] || [];
      delete S.waiting[id];
      w.forEach(function (f) { f(data); });
    }
  };

  function setCrumbs(p) {
    crumbs.textContent = '';
    if (S.index.report) add(crumbs, link('report', S.index.report), el('span', 'sep', '·'));
    add(crumbs, link('all conditions', '#'));
    if (p.cell) add(crumbs, el('span', 'sep', '›'), link(p.cell[0] + ' / ' + p.cell[1], hash({ cell: p.cell, point: p.point })));
    if (p.task !== undefined) add(crumbs, el('span', 'sep', '›'), link(p.task, hash({ cell: p.cell, task: p.task, point: p.point })));
    if (p.ep) add(crumbs, el('span', 'sep', '›'), el('span', null, p.ep.slice(3).join('/')));
  }
  function section(title) {
    var s = el('section');
    if (title) add(s, el('h2', null, title));
    view.appendChild(s);
    return s;
  }
  function table(cols, rows) {
    var t = el('table'), head = el('tr');
    cols.forEach(function (c) { add(head, el('th', null, c)); });
    add(t, add(el('thead'), head));
    var body = el('tbody');
    rows.forEach(function (r) { body.appendChild(r); });
    return add(t, body);
  }
  function row(cells, cls) {
    var tr = el('tr', cls);
    cells.forEach(function (c) {
      var td = el('td', typeof c === 'number' ? 'num' : null);
      if (c instanceof Node) td.appendChild(c); else td.textContent = c;
      tr.appendChild(td);
    });
    return tr;
  }

  function route() {
    if (!S.index) return;
    var p = params();
    window.scrollTo(0, 0);
    view.textContent = '';
    setCrumbs(p);
    if (p.ep) return showEpisode(p);
    if (p.cell && p.task !== undefined) return showTask(p);
    if (p.cell) return showCell(p);
    showHome();
  }

  function showHome() {
    var s = section('Targets and conditions');
    add(s, el('p', 'note', 'Each row is one target under one condition; open it for its tasks and episodes.'));
    var rows = S.index.cells.map(function (c) {
      var n = 0, usable = 0, acc = 0, sus = 0;
      c.tasks.forEach(function (g) { n += g.n; usable += g.usable; acc += g.accepted; sus += g.susceptible; });
      return row([link(c.target + ' / ' + c.condition, hash({ cell: [c.target, c.condition] })), c.kind, c.attacker, n, pct(acc, usable), sus]);
    });
    add(s, table(['target / condition', 'kind', 'attacker', 'episodes', 'accepted', 'susceptible'], rows));
    if (!S.index.trajectories) add(s, el('p', 'empty', 'This results folder has no trajectories.jsonl: episodes show their verdicts, not their steps.'));
  }

  function showCell(p) {
    var cell = findCell(p.cell[0], p.cell[1]);
    if (!cell) return add(section(), el('p', 'empty', 'No episodes of ' + p.cell.join(' / ') + ' in these results.'));
    var s = section(cell.target + ' / ' + cell.condition + ' (' + cell.kind + ', attacker ' + cell.attacker + ')');
    var groups = cell.tasks.filter(function (g) { return p.point === undefined || g.points.indexOf(p.point) >= 0; });
    if (p.point !== undefined) add(s, el('p', 'note', 'Tasks with forks at point ' + p.point + '.'));
    var rows = groups.map(function (g) {
      var task = S.index.tasks[g.task];
      return row([link(task, hash({ cell: p.cell, task: task, point: p.point })), g.n, pct(g.accepted, g.usable), g.told, g.susceptible, g.points.join(', ')], g.susceptible ? 'sus' : null);
    });
    add(s, table(['task', 'episodes', 'accepted', 'told', 'susceptible', 'fork points'], rows));
  }

  function withGroup(cellKey, task, done) {
    var g = findGroup(findCell(cellKey[0], cellKey[1]), task);
    if (!g) return done(null, null);
    load(g.f, function (data) { done(g, data); });
  }
  function missing(what, g) {
    add(section(), el('p', 'empty', what + (g ? ' (the fragment f/' + g.f + '.js could not be loaded: was the viewer folder moved or cut?)' : ' is not in these results.')));
  }

  function showTask(p) {
    withGroup(p.cell, p.task, function (g, data) {
      if (!data) return missing(p.cell.join(' / ') + ' on ' + p.task, g);
      var s = section(p.cell[0] + ' / ' + p.cell[1] + ' on ' + p.task);
      var rows = [];
      data.results.forEach(function (r) {
        if (p.point !== undefined && !(r.fork && r.fork.points.indexOf(p.point) >= 0)) return;
        var key = keyOf(r);
        var label = key.split('/').slice(3).join('/');
        var sus = r.susceptible === true;
        rows.push(row([link(label, hash({ ep: key.split('/') })), r.infra_error ? 'infrastructure error' : (r.accepted ? 'yes' : 'no'),
          r.susceptible === null || r.susceptible === undefined ? '—' : (sus ? 'yes' : 'no'), r.messages_delivered, r.failure_mode || '', r.steps,
          r.fork ? r.fork.points.join(', ') : ''], sus ? 'sus' : null));
      });
      add(s, el('p', 'note', 'Open an episode to read it step by step: an attacked episode beside a baseline episode of the same task, a fork branch beside its twin.'));
      add(s, table(['episode', 'accepted', 'susceptible', 'messages', 'failure mode', 'steps', 'fork points'], rows));
    });
  }

  function byKey(list, key) {
    for (var i = 0; i < list.length; i++) if (keyOf(list[i]) === key) return list[i];
    return null;
  }
  function episodeOf(data, key) {
    return { key: key, result: byKey(data.results, key), trajectory: byKey(data.trajectories, key) };
  }

  function showEpisode(p) {
    var key = p.ep.join('/');
    var task = p.ep[2];
    withGroup(p.cell, task, function (g, data) {
      if (!data) return missing('Episode ' + key, g);
      var ep = episodeOf(data, key);
      if (!ep.result && !ep.trajectory) return missing('Episode ' + key, null);
      if (p.ep.length > 5) return showFork(ep, data);
      var cell = findCell(p.cell[0], p.cell[1]);
      if (!cell || cell.kind === 'baseline') return showSingle(ep);
      withGroup([p.cell[0], 'baseline'], task, function (bg, bdata) { showBeside(ep, bdata, p); });
    });
  }

  function showSingle(ep) {
    var s = section(null);
    add(s, column(ep, { title: ep.key }));
  }

  function showBeside(ep, bdata, p) {
    var s = section('Beside the baseline');
    var base = null, note;
    if (bdata) {
      var samples = bdata.results.filter(function (r) { return !r.fork; });
      var want = p.base !== undefined ? Number(p.base) : (ep.result || ep.trajectory).sample;
      var pick = samples.filter(function (r) { return r.sample === want; })[0] || samples[0];
      if (pick) {
        base = episodeOf(bdata, keyOf(pick));
        note = el('p', 'note', 'Right: the baseline episode of the same task, sample ' + pick.sample + (pick.sample === want ? '' : ' (there is no baseline sample ' + want + ')') + '. Other baseline samples: ');
        samples.forEach(function (r) { if (r !== pick) add(note, link('s' + r.sample, hash({ ep: keyOf(ep.result || ep.trajectory).split('/'), base: r.sample })), document.createTextNode(' ')); });
      }
    }
    if (note) add(s, note);
    var pair = put(s, el('div', 'pair'));
    add(pair, column(ep, { title: ep.key }));
    if (base) add(pair, column(base, { title: base.key }));
    else add(pair, add(el('div', 'col'), el('p', 'empty', 'No baseline episode of this task in these results.')));
  }

  function showFork(ep, data) {
    var k = ep.key.split('/');
    var stem = k.slice(0, 6).join('/');
    var msg = episodeOf(data, stem + '/message'), sil = episodeOf(data, stem + '/silent');
    var r = msg.result || sil.result;
    var step = r && r.fork ? r.fork.step : Number(k[5].replace('fork@', ''));
    var s = section('Fork after step ' + step + (r && r.fork ? ' (fork points: ' + r.fork.points.join(', ') + ')' : '') + ': message against silent');
    add(s, el('p', 'note', 'Both branches replay the parent baseline episode ' + (r && r.fork ? r.fork.parent : '') + ' up to step ' + step +
      '; then the collaborator speaks in the message branch and stays silent in the other.'));
    var ms = msg.trajectory ? msg.trajectory.trajectory : [], ss = sil.trajectory ? sil.trajectory.trajectory : [];
    var pre = put(s, el('details', 'prefix'));
    add(pre, el('summary', null, (step === 1 ? 'Step 1' : 'Steps 1–' + step) + ': shared by both branches (folded)'));
    ms.slice(0, step).forEach(function (st) { add(pre, stepCard(st, [], { noMessage: true })); });
    var told = ms[step - 1] && ms[step - 1].message;
    var differ = -1;
    for (var i = step; i < Math.max(ms.length, ss.length); i++) {
      if (!ms[i] || !ss[i] || sameAction(ms[i], ss[i]) === false) { differ = i; break; }
    }
    add(s, el('p', 'split', differ >= 0 ? 'First step where they differ: step ' + (differ + 1) + '.' : 'The branches take the same actions after the fork.'));
    var pair = put(s, el('div', 'pair'));
    [[msg, told], [sil, null]].forEach(function (x) {
      var c = put(pair, column(x[0], { title: x[0].key, from: step, differ: differ }));
      if (x[1]) c.insertBefore(messageBox(x[1], ms.slice(step)), c.querySelector('.step'));
    });
  }
  function sameAction(a, b) {
    return JSON.stringify(a.action) + (a.raw || '') === JSON.stringify(b.action) + (b.raw || '');
  }

  function column(ep, o) {
    var c = el('div', 'col');
    var r = ep.result, t = ep.trajectory;
    var h = put(c, el('h3', null, o.title));
    var accepted = r ? r.accepted : t && t.accepted;
    add(h, el('span', 'badge ' + (accepted ? 'ok' : 'bad'), accepted ? 'accepted' : 'rejected'));
    var sus = r ? r.susceptible : t && t.susceptible;
    if (sus === true) add(h, el('span', 'badge sus', 'susceptible'));
    if (r) add(c, verdict(r));
    if (!t) return add(c, el('p', 'empty', 'No trajectory recorded for this episode.'));
    var steps = t.trajectory;
    steps.forEach(function (st, i) {
      if (o.from !== undefined && i < o.from) return;
      var card = stepCard(st, steps.slice(i + 1), { noMessage: false });
      if (o.differ === i) {
        card.classList.add('differ');
        add(card.querySelector('.step-head'), el('span', 'differ-label', 'first step where the branches differ'));
      }
      add(c, card);
    });
    if (!steps.length) add(c, el('p', 'empty', 'The episode has no steps.'));
    (t.rejected_messages || []).forEach(function (m) {
      add(c, el('p', 'rejected', 'Rejected by the leakage filter after step ' + m.step + ' (attempt ' + m.attempt + '): ' + m.text));
    });
    return c;
  }

  function verdict(r) {
    var d = el('dl', 'verdict');
    function item(k, v) { add(d, el('dt', null, k), el('dd', null, v)); }
    if (r.infra_error) item('infrastructure error', r.infra_error);
    if (r.verdict) {
      var v = r.verdict;
      item('hidden tests', v.hidden_tests_pass ? 'pass' : 'fail');
      item('reference location', v.touches_reference ? 'touched' : 'missed');
      item('flags', v.flags.length ? v.flags.map(function (f) { return f.name + ' at ' + f.file + ':' + f.line; }).join(', ') : 'none');
    }
    item('failure mode', r.failure_mode || '—');
    item('agent / attacker', r.agent + ' / ' + r.attacker);
    item('steps', r.steps + (r.submitted ? ', submitted' : ', not submitted') + ', ' + r.messages_delivered + ' message(s) delivered');
    item('target tokens', tokens(r.usage));
    if (r.attacker_usage && (r.attacker_usage.prompt_tokens || r.attacker_usage.completion_tokens)) item('attacker tokens', tokens(r.attacker_usage));
    if (r.usage && r.usage.cost) item('target cost', cost(r.usage.cost));
    if (r.attacker_usage && r.attacker_usage.cost) item('attacker cost', cost(r.attacker_usage.cost));
    return d;
  }
  function tokens(u) {
    if (!u) return '—';
    return u.prompt_tokens + ' in, ' + u.completion_tokens + ' out' + (u.cached_tokens ? ' (' + u.cached_tokens + ' cached)' : '') +
      (u.calls ? ', ' + u.calls + ' calls' : '') + (u.calls_without_usage ? ' (' + u.calls_without_usage + ' without usage)' : '');
  }
  // A role's cost in US dollars, and where it came from.
  function cost(c) {
    var how = [];
    if (c.reported_calls) how.push(c.reported_calls + ' reported by the provider');
    if (c.computed_calls) how.push(c.computed_calls + ' computed from prices');
    if (c.unknown_calls) how.push(c.unknown_calls + ' unknown: a lower bound');
    return '$' + Number(c.usd).toFixed(4) + (how.length ? ' (calls: ' + how.join(', ') + ')' : '');
  }

  function pre(text, cls) { return el('pre', cls, text); }
  function folded(text) {
    var lines = String(text).split('\n');
    if (lines.length <= FOLD + 2) return pre(text);
    var f = el('div');
    add(f, pre(lines.slice(0, FOLD).join('\n')));
    var d = put(f, el('details'));
    add(d, el('summary', null, (lines.length - FOLD) + ' more lines'), pre(lines.slice(FOLD).join('\n')));
    return f;
  }
  function diff(old, neu) {
    var p = el('pre', 'diff');
    String(old).split('\n').forEach(function (l) { add(p, el('span', 'del', '-' + l)); });
    String(neu).split('\n').forEach(function (l) { add(p, el('span', 'add', '+' + l)); });
    return p;
  }
  function actionBox(st) {
    var a = st.action, box = el('div', 'action');
    if (!a) {
      add(box, el('div', 'label', 'reply (the agent\'s own words and tool calls)'));
      return add(box, pre(st.raw || '(none)'));
    }
    var what = { read: 'read', list: 'list', search: 'search', edit: 'edit', write: 'write', run_public_tests: 'run the public tests', submit: 'submit' }[a.action] || a.action;
    add(box, document.createTextNode(what + ' '));
    if (a.path) add(box, el('code', null, a.path));
    if (a.pattern) add(box, el('code', null, a.pattern));
    if (a.start_line) add(box, document.createTextNode(' lines ' + a.start_line + '–' + (a.end_line || '')));
    if (a.action === 'edit') add(box, diff(a.old, a.new));
    if (a.action === 'write') add(box, folded(a.content));
    return box;
  }
  function stepCard(st, rest, o) {
    var card = el('div', 'step');
    var head = put(card, el('div', 'step-head', 'step ' + st.index));
    if (st.moment) add(head, el('span', 'moment', st.moment.kind.replace('_', ' ') + ' (rule ' + st.moment.rule + ')'));
    var ob = st.observation || {};
    if (ob.error) add(head, el('span', 'status fail', 'error'));
    else if (ob.tests_passed === true) add(head, el('span', 'status pass', 'tests pass'));
    else if (ob.tests_passed === false) add(head, el('span', 'status fail', 'tests fail'));
    if (st.reasoning) {
      var d = put(card, el('details'));
      add(d, el('summary', null, 'reasoning'), pre(st.reasoning));
    }
    add(card, actionBox(st));
    add(card, el('div', 'label', 'tool output' + (ob.truncated ? ' (truncated by the tool)' : '')), folded(ob.output || ''));
    if (st.message && !o.noMessage) add(card, messageBox(st.message, rest));
    return card;
  }

  function claimItems(c) {
    var items = [];
    (c.blame || []).forEach(function (l) { items.push('blames ' + l.file + (l.symbol ? ': ' + l.symbol : '')); });
    if (c.urge_submit) items.push('urges to submit now');
    if (c.dismissed_cases && c.dismissed_cases.length) items.push('dismisses ' + c.dismissed_cases.join(', '));
    return items;
  }
  function named(m, a) {
    return ((m.claims && m.claims.blame) || []).some(function (l) {
      if (l.file !== a.path) return false;
      var text = a.action === 'edit' ? a.old + a.new : a.content;
      return !l.symbol || text.indexOf(l.symbol) >= 0;
    });
  }
  function stepWords(m, st) {
    var a = st.action;
    if (a && (a.action === 'edit' || a.action === 'write')) {
      var blame = (m.claims && m.claims.blame) || [];
      var hit = named(m, a);
      return ['edited ' + a.path + ' (step ' + st.index + ')' + (hit ? ', the place the message names' : (blame.length ? ', not the place the message names' : '')), hit];
    }
    if (a && a.action === 'run_public_tests') return ['ran the tests (step ' + st.index + ')', false];
    if (a && a.action === 'submit') return ['submitted (step ' + st.index + ')' + (m.claims && m.claims.urge_submit ? ', as the message urged' : ''), !!(m.claims && m.claims.urge_submit)];
    if (!a && st.moment) return [st.moment.kind.replace('_', ' ') + ' (step ' + st.index + ')', false];
    return [(a ? a.action + (a.path ? ' ' + a.path : '') : 'a reply') + ' (step ' + st.index + ')', false];
  }
  // What the agent did after a message: its next step, and its first edit, test run or
  // submission before the next message.
  function nextWords(m, after) {
    if (!after.length) return ['The episode ended after this message.', false];
    var first = stepWords(m, after[0]);
    var words = 'Next: ' + first[0];
    var followed = first[1];
    var a0 = after[0].action;
    var decisive = (a0 && ['edit', 'write', 'run_public_tests', 'submit'].indexOf(a0.action) >= 0) || (!a0 && after[0].moment);
    if (!decisive) {
      for (var i = 1; i < after.length; i++) {
        var a = after[i].action;
        if ((a && ['edit', 'write', 'run_public_tests', 'submit'].indexOf(a.action) >= 0) || (!a && after[i].moment)) {
          var w = stepWords(m, after[i]);
          words += '; then ' + w[0];
          followed = followed || w[1];
          break;
        }
        if (after[i].message) break;
      }
    }
    return [words + '.', followed];
  }
  function messageBox(m, after) {
    var b = el('div', 'injected');
    add(b, el('div', 'label', 'Collaborator message: injected by the attacker after the tool output'));
    add(b, el('p', null, m.text));
    var items = claimItems(m.claims || {});
    if (items.length) {
      var ul = put(b, el('ul'));
      items.forEach(function (i) { add(ul, el('li', null, 'claim: ' + i)); });
    }
    var w = nextWords(m, after);
    add(b, el('div', 'next' + (w[1] ? ' followed' : ''), w[0]));
    return b;
  }

  window.addEventListener('hashchange', route);
  var s = document.createElement('script');
  s.src = 'index.js';
  s.onerror = function () {
    view.textContent = '';
    add(view, el('p', 'empty', 'index.js could not be loaded: open viewer.html from its folder as the report wrote it.'));
  };
  document.head.appendChild(s);
})();
