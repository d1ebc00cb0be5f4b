// The workbench's page: a view over the WebAssembly build of ratelab (web/wasm), which
// computes every number, state and sentence shown here. Loaded from a file or a server.
'use strict';
(() => {
// $ is the element of that id; a form of the page that lacks it (embed.html shows the lanes
// only) gets a detached stand-in, so the code that fills it needs no test.
const stand = document.createElement('div');
const $ = (id) => document.getElementById(id) || stand;
const embed = document.body.classList.contains('embed');
const NS = { ns: 1, us: 1e3, ms: 1e6, s: 1e9, m: 60e9, h: 3600e9 };

// dur formats nanoseconds for the screen: 1.25s, 40ms, 3µs.
function dur(ns) {
  ns = Number(ns);
  if (ns === 0) return '0';
  const a = Math.abs(ns);
  const f = (v, u) => (+v.toPrecision(4)).toString() + u;
  if (a >= 3600e9) return f(ns / 3600e9, 'h');
  if (a >= 60e9) return f(ns / 60e9, 'm');
  if (a >= 1e9) return f(ns / 1e9, 's');
  if (a >= 1e6) return f(ns / 1e6, 'ms');
  if (a >= 1e3) return f(ns / 1e3, 'µs');
  return ns + 'ns';
}
// parseDur reads "1.5s", "200ms", "3" (seconds).
function parseDur(text) {
  const m = /^\s*([0-9.]+)\s*(ns|us|µs|ms|s|m|h)?\s*$/.exec(text);
  if (!m) return null;
  return Math.round(parseFloat(m[1]) * NS[(m[2] || 's').replace('µs', 'us')]);
}

// call runs one of the WebAssembly's functions and returns its value, or throws its problem.
function call(api, name, ...args) {
  const r = JSON.parse(api[name](...args));
  if (r.error) { const e = new Error(r.error.message); e.problem = r.error; throw e; }
  return r.ok;
}
const rl = (name, ...args) => call(window.ratelab, name, ...args);

// loadWasm instantiates a gzip'd, base64'd WebAssembly (a script's global: works from file://).
// The phases are timed (ms since navigation start) into app.phases: the browser test reports them.
async function loadWasm(b64, readyEvent) {
  const mark = (name) => { app.phases[readyEvent + ':' + name] = Math.round(performance.now()); };
  mark('script');
  const packed = await (await fetch('data:application/octet-stream;base64,' + b64)).blob();
  const stream = packed.stream().pipeThrough(new DecompressionStream('gzip'));
  const buf = await new Response(stream).arrayBuffer();
  mark('unzipped');
  const go = new Go();
  const { instance } = await WebAssembly.instantiate(buf, go.importObject);
  mark('compiled');
  const ready = new Promise((resolve) => window.addEventListener(readyEvent, resolve, { once: true }));
  go.run(instance);
  await ready;
  mark('ready');
}

const speeds = [1e6, 2e6, 5e6, 1e7, 2e7, 5e7, 1e8, 2e8, 5e8, 1e9, 2e9, 5e9, 1e10, 2e10, 6e10, 3e11, 3.6e12];
const app = {
  view: null, yaml: '', speed: 7, playing: false, focus: 0, lastFrame: 0, predict: false, exact: false,
  meter: { events: 0, busy: 0, rate: 0, since: 0 },
  firstLaneMs: null, phases: {},
};
window.app = app;

function status(text) { $('status').textContent = text; }

// show draws the view: the clock, the slider, every lane, the focused lane's log.
function show(v) {
  app.view = v;
  $('clock').textContent = embed ? `t=${dur(v.now_ns)}` : `t=${dur(v.now_ns)} of ${dur(v.horizon_ns)} · event ${v.steps}${v.done ? ' · end' : ''}`;
  $('seek').value = Math.round(1000 * v.now_ns / v.horizon_ns);
  const lanes = $('lanes');
  while (lanes.children.length > v.lanes.length) lanes.lastChild.remove();
  v.lanes.forEach((lane, i) => {
    let el = lanes.children[i];
    if (!el) {
      el = document.createElement('article');
      el.className = 'lane';
      el.innerHTML = '<h3></h3><div class="counts"></div><div class="state-text"></div><svg class="state" viewBox="0 0 300 34" preserveAspectRatio="none"></svg><svg class="strip" viewBox="0 0 400 40" preserveAspectRatio="none"></svg><div class="last"></div><div class="guess"></div>';
      el.addEventListener('click', () => { app.focus = i; show(app.view); });
      lanes.appendChild(el);
    }
    el.style.setProperty('--c', lane.color);
    el.classList.toggle('focus', i === app.focus);
    el.dataset.lane = i;
    el.querySelector('h3').textContent = `${i + 1}. ${lane.label}`;
    const extra = (lane.in_flight ? ` · ${lane.in_flight} in flight` : '') + (lane.queue ? ` · ${lane.queue} queued` : '');
    el.querySelector('.counts').innerHTML = `<b class="a">${lane.admitted}</b> admitted · <b class="r">${lane.rejected}</b> rejected${extra}`;
    const [text, svg] = drawState(lane.stages[0], lane.shapes[0], lane.color, v.now_ns);
    el.querySelector('.state-text').textContent = text + (lane.stages.length > 1 ? ` (+${lane.stages.length - 1} stage${lane.stages.length > 2 ? 's' : ''})` : '');
    el.querySelector('svg.state').innerHTML = svg;
    el.querySelector('svg.strip').innerHTML = strip(lane.columns, lane.color, v);
    el.querySelector('.last').textContent = (lane.log || []).slice(-2).join('\n');
    const p = v.predict;
    el.querySelector('.guess').textContent = p && p.guesses ? (p.revealed
      ? `admitted ${p.admitted[i]} of ${p.last - p.first + 1} · you said ${p.guesses[i]} ${p.admitted[i] === p.guesses[i] ? '✓ right' : '✗ off by ' + Math.abs(p.admitted[i] - p.guesses[i])}`
      : `you said ${p.guesses[i]} · ${p.admitted[i]} admitted, ${p.ended[i]} of ${p.last - p.first + 1} decided`) : '';
    el.querySelector('.last').style.whiteSpace = 'pre-line';
  });
  const lane = v.lanes[Math.min(app.focus, v.lanes.length - 1)];
  $('log-lane').textContent = lane ? `(lane ${app.focus + 1}: ${lane.label}; tab: next lane)` : '';
  $('log').innerHTML = '';
  for (const s of (lane ? lane.log : []).slice().reverse()) {
    const li = document.createElement('li');
    li.textContent = s;
    $('log').appendChild(li);
  }
  showPredict(v);
  fitLanes();
  if (app.firstLaneMs === null && v.lanes.length) {
    app.firstLaneMs = performance.now();
    document.body.dataset.firstLaneMs = app.firstLaneMs.toFixed(0);
  }
  updateLink();
}

// showPredict shows predict mode's question (a guess box) or answer (each lane's count).
function showPredict(v) {
  const p = v.predict, box = $('predict');
  $('predict-mode').classList.toggle('on', app.predict);
  box.hidden = !p;
  if (!p) return;
  const n = p.last - p.first + 1;
  if (p.asking) {
    $('predict-text').textContent = `predict · next: ${p.why}. Of the next ${n} requests (#${p.first}–#${p.last}), how many will each lane admit? One number per lane, in order · enter plays · esc skips`;
    $('guess').hidden = false; $('guess').placeholder = v.lanes.map(() => '3').join(' ');
    if (document.activeElement !== $('guess')) { $('guess').value = ''; $('guess').focus(); }
  } else if (p.revealed) {
    $('predict-text').textContent = `reveal · requests #${p.first}–#${p.last}: ${p.right} of ${v.lanes.length} lanes guessed right (see each lane) · space plays on`;
    $('guess').hidden = true;
  } else {
    $('predict-text').textContent = `playing until every lane has decided requests #${p.first}–#${p.last}…`;
    $('guess').hidden = true;
  }
}
// fitLanes lays the lanes out in the grid of columns that gives each the largest cell in
// their box (the window, or the embedded form's frame), so that all show without scrolling:
// up to 8 lanes on the page, any number embedded.
function fitLanes() {
  const box = $('lanes'), n = Math.max(app.view.lanes.length, 1);
  box.classList.toggle('fit', embed || n <= 8);
  if (!box.classList.contains('fit')) { box.style.gridTemplateColumns = box.style.gridTemplateRows = ''; return; }
  const W = box.clientWidth, H = box.clientHeight;
  let best = 1, score = 0;
  for (let c = 1; c <= n; c++) {
    const w = W / c, h = H / Math.ceil(n / c);
    const sc = Math.min(w / 2.2, h); // a lane reads best about 2.2 times wider than high
    if (sc > score) { score = sc; best = c; }
  }
  box.style.gridTemplateColumns = `repeat(${best}, minmax(0, 1fr))`;
  box.style.gridTemplateRows = `repeat(${Math.ceil(n / best)}, minmax(0, 1fr))`;
}

// drawState is a stage's state in words and as an SVG drawing, by its shape, as the TUI draws it.
function drawState(st, shape, color, now) {
  const bar = (frac, label) => {
    frac = Math.max(0, Math.min(1, frac || 0));
    return `<rect x="0" y="6" width="300" height="20" fill="#eee" stroke="#999"/><rect x="0" y="6" width="${300 * frac}" height="20" fill="${color}"/>` +
      (label ? `<text x="296" y="21" text-anchor="end" font-size="13" fill="#111">${label}</text>` : '');
  };
  switch (shape) {
    case 'schedule': case 'ramp': {
      const backlog = Math.max(st.arrival_ns - st.at_ns, 0);
      const fits = backlog + st.interval_ns <= st.tolerance_ns;
      let text = backlog > 0 ? `TAT ${dur(st.arrival_ns)} (+${dur(backlog)})` : 'TAT ≤ now (full)';
      text += ` · T ${dur(st.interval_ns)} · τ ${dur(st.tolerance_ns)} · ${st.available}/${st.max_permits} free`;
      if (shape === 'ramp') text += st.age_ns < st.warm_up_ns ? ` · warming ${dur(st.age_ns)}/${dur(st.warm_up_ns)}` : ' · warm';
      const x = st.tolerance_ns > 0 ? 300 * Math.min(backlog / st.tolerance_ns, 1) : 0;
      const svg = `<rect x="0" y="6" width="300" height="20" fill="#eee" stroke="#999"/><rect x="0" y="6" width="${x}" height="20" fill="${color}"/>` +
        `<circle cx="${Math.max(x, 5)}" cy="16" r="5" fill="#111"/><text x="4" y="33" font-size="9" fill="#555">now</text>` +
        `<text x="296" y="33" font-size="9" text-anchor="end" fill="#555">now+τ · ${fits ? '1 more fits' : '1 more refused'}</text>`;
      return [text, svg];
    }
    case 'slots': {
      const slots = st.slots || [];
      const w = 300 / Math.max(slots.length, 1);
      const most = Math.max(1, ...slots.map((s) => s.live ? s.count : 0));
      let svg = '';
      slots.forEach((s, k) => {
        const h = s.live ? 26 * s.count / most : 0;
        svg += `<rect x="${k * w + 1}" y="${30 - h}" width="${w - 2}" height="${h}" fill="${color}"/><rect x="${k * w + 1}" y="4" width="${w - 2}" height="26" fill="none" stroke="#bbb"/>`;
      });
      return [`live ${st.count} of ${st.limit} · ${slots.length} slots of ${dur(st.slot_length_ns)}`, svg];
    }
    case 'window':
      return [`window [${dur(st.window_start_ns)}, ${dur(st.window_end_ns)}) · ${st.count} of ${st.limit} used · resets in ${dur(st.window_end_ns - now)}`,
        bar(st.count / st.limit, `${st.count}/${st.limit}`)];
    case 'bulkhead':
      return [`${st.in_flight} of ${st.max} in flight · ${st.max - st.in_flight} free`, bar(st.in_flight / st.max, `${st.in_flight}/${st.max}`)];
    case 'level':
      return [`${st.level_name || 'level'} ${(+st.level.toFixed(2))} of ${st.level_max} · next free ${st.next_free_ns <= st.at_ns ? 'now' : dur(st.next_free_ns)}`,
        bar(st.level / st.level_max, `${(+st.level.toFixed(1))}/${st.level_max}`)];
  }
  return [`${st.kind} · ${st.available} free`, bar(st.max_permits ? st.available / st.max_permits : 0)];
}

// strip is the lane's decisions per time slice so far: admitted up, rejected down.
function strip(cols, color, v) {
  const n = Math.ceil(v.horizon_ns / v.slice_ns) + 1;
  const w = 400 / n;
  const most = Math.max(1, ...cols.map((c) => Math.max(c.a, c.r)));
  let out = '<line x1="0" y1="20" x2="400" y2="20" stroke="#ccc"/>';
  cols.forEach((c, k) => {
    if (c.a) out += `<rect x="${k * w}" y="${20 - 19 * c.a / most}" width="${Math.max(w, 0.8)}" height="${19 * c.a / most}" fill="${color}"/>`;
    if (c.r) out += `<rect x="${k * w}" y="20" width="${Math.max(w, 0.8)}" height="${19 * c.r / most}" fill="#d55e00"/>`;
  });
  return out + `<line x1="${400 * v.now_ns / v.horizon_ns}" y1="0" x2="${400 * v.now_ns / v.horizon_ns}" y2="40" stroke="#111"/>`;
}

// act runs a session function and shows the view, or says what went wrong.
function act(name, ...args) {
  const t0 = performance.now(), e0 = app.view ? app.view.events : 0;
  try {
    const v = rl(name, ...args);
    app.meter.events += v.events - e0;
    app.meter.busy += performance.now() - t0;
    show(v);
    return v;
  } catch (e) {
    status(e.message);
    pause();
    return null;
  }
}

function setSpeed(k) {
  app.speed = Math.max(0, Math.min(speeds.length - 1, k));
  $('speed').textContent = `${dur(speeds[app.speed])}/s`;
}
function play() {
  if (app.view && app.view.done) act('seek', 0);
  if (app.view && app.view.predict && app.view.predict.asking) { $('guess').focus(); return; }
  app.playing = true; $('play').textContent = '‖ pause'; app.lastFrame = performance.now();
  requestAnimationFrame(frame);
}
function pause() { app.playing = false; $('play').textContent = '▶ play'; updateLink(); }
function frame(ts) {
  if (!app.playing) return;
  const dt = Math.min(ts - app.lastFrame, 100);
  app.lastFrame = ts;
  const v = act('advance', speeds[app.speed] * dt / 1000);
  if (!v || v.done || (v.predict && !v.predict.playing)) { pause(); return; }
  requestAnimationFrame(frame);
}
// The meter: decisions (records) simulated per second of the time spent simulating.
setInterval(() => {
  const m = app.meter;
  if (m.busy > 0) m.rate = m.events / (m.busy / 1000);
  $('rate').textContent = m.rate ? `${Math.round(m.rate).toLocaleString('en')} decisions/s simulated` : '';
  m.events = 0; m.busy = 0;
}, 1000);

let linkTimer = 0;
function updateLink() {
  if (app.playing) return;
  clearTimeout(linkTimer);
  linkTimer = setTimeout(() => {
    const link = rl('link');
    $('full').href = 'index.html#' + link;
    try { history.replaceState(null, '', '#' + link); } catch (e) { /* file:// may refuse */ }
  }, 150);
}

function open(yaml, moment) {
  app.yaml = yaml;
  $('editor').value = yaml;
  $('editor').classList.remove('bad');
  $('editor-error').textContent = '';
  pause();
  const v = moment ? act('open', yaml, moment.steps, moment.now_ns) : act('open', yaml);
  if (v) { app.focus = 0; status(`${v.scenario}: ${v.lanes.length} lanes · space plays, . steps, , steps back, b sends a burst, ? lists the keys`); }
  return v;
}
app.selectScenario = (name) => { $('scenario').value = name; return open(rl('builtinYAML', name)); };
app.runJSON = () => rl('runJSON', $('editor').value);

function checkEditor() {
  try { rl('check', $('editor').value); $('editor').classList.remove('bad'); $('editor-error').textContent = ''; return true; } catch (e) {
    $('editor').classList.add('bad');
    $('editor-error').textContent = e.message;
    return false;
  }
}
function apply() {
  if (!checkEditor()) return;
  const v = open($('editor').value);
  if (v) $('scenario').value = v.scenario;
}
function addLane() {
  const spec = $('spec').value.trim();
  try {
    rl('checkSpec', spec);
    const yaml = rl('addLane', $('editor').value, spec);
    $('spec-error').textContent = '';
    const at = app.view ? app.view.now_ns : 0;
    if (open(yaml)) act('seek', at);
    app.focus = app.view.lanes.length - 1; show(app.view);
  } catch (e) { $('spec-error').textContent = e.message; }
}
function burst() {
  const n = parseInt($('burst-size').value, 10);
  const v = act('burst', n);
  if (v) { app.yaml = rl('yaml'); $('editor').value = app.yaml; status(`sent a burst of ${n} requests at t=${dur(v.now_ns)} (recorded in the scenario: see the editor's script source)`); }
}

// rate multiplies the rate of the flat source active now, from now on, as the TUI's ↑/↓ do:
// the change is written into the scenario (the editor shows the split source).
function rate(factor) {
  try {
    const r = rl('rate', factor);
    show(r.view); app.yaml = rl('yaml'); $('editor').value = app.yaml;
    status(r.note + ' (recorded in the scenario: see the editor\'s sources)');
  } catch (e) { status(e.message); }
}
function togglePredict() {
  app.predict = !app.predict;
  act('predict', app.predict);
  status(app.predict ? 'predict mode: play (space) pauses just before a burst after idle or a full window\'s boundary, then asks' : 'predict mode off');
}
function guess() {
  try { show(rl('guess', $('guess').value)); $('guess').blur(); play(); } catch (e) { status(e.message); }
}
function toggleExact() {
  app.exact = !app.exact;
  act('exact', app.exact);
  status(app.exact ? 'the log shows exact durations (x: rounded)' : 'the log rounds durations to four digits, as the TUI (x: exact)');
}
// embedCode is an <iframe> of embed.html showing this scenario at this moment.
function embedCode() {
  const base = location.href.split('#')[0].replace(/[^/]*$/, '');
  return `<iframe src="${base}embed.html#${rl('link')}" width="640" height="360" style="border:0" title="ratelab: ${app.view.scenario}"></iframe>`;
}
app.embedCode = embedCode;

// Charts: the WebAssembly build with package plots, loaded the first time they are asked for.
let chartsReady = null;
function loadCharts() {
  if (!chartsReady) {
    chartsReady = new Promise((resolve, reject) => {
      const s = document.createElement('script');
      s.src = 'ratelab-charts.wasm.js';
      s.onload = () => loadWasm(window.RATELAB_CHARTS_WASM, 'ratelab-charts-ready').then(resolve, reject);
      s.onerror = () => reject(new Error('ratelab-charts.wasm.js did not load'));
      document.head.appendChild(s);
    });
  }
  return chartsReady;
}
async function charts() {
  $('chart-dialog').showModal();
  $('chart').textContent = 'loading the charts (package plots)…';
  try {
    await loadCharts();
    const yaml = rl('yaml');
    const names = call(window.ratelabCharts, 'names', yaml);
    $('chart-tabs').innerHTML = '';
    const draw = (name) => {
      const svg = call(window.ratelabCharts, 'svg', yaml, name);
      $('chart').innerHTML = svg;
      [...$('chart-tabs').children].forEach((b) => b.classList.toggle('on', b.textContent === name));
      const url = URL.createObjectURL(new Blob([svg], { type: 'image/svg+xml' }));
      $('chart-links').innerHTML = `<a download="${app.view.scenario}-${name}.svg" href="${url}">download SVG</a><a href="#" id="png">download PNG</a>`;
      $('png').onclick = (ev) => { ev.preventDefault(); png(url, `${app.view.scenario}-${name}.png`); };
    };
    names.forEach((name) => {
      const b = document.createElement('button');
      b.textContent = name; b.onclick = () => draw(name);
      $('chart-tabs').appendChild(b);
    });
    if (names.length) draw(names[0]);
  } catch (e) { $('chart').textContent = e.message; }
}
function png(svgURL, file) {
  const img = new Image();
  img.onload = () => {
    const c = document.createElement('canvas');
    c.width = img.naturalWidth || 1000; c.height = img.naturalHeight || 600;
    const g = c.getContext('2d'); g.fillStyle = '#fff'; g.fillRect(0, 0, c.width, c.height); g.drawImage(img, 0, 0);
    c.toBlob((b) => { const a = document.createElement('a'); a.href = URL.createObjectURL(b); a.download = file; a.click(); });
  };
  img.src = svgURL;
}
function json() {
  $('json-dialog').showModal();
  try { $('json-out').textContent = app.runJSON(); } catch (e) { $('json-out').textContent = e.message; }
}

const keys = [
  ['space', 'play / pause', () => (app.playing ? pause() : play())],
  ['. →', 'step one event', () => { pause(); act('step'); }],
  [', ←', 'step back one event', () => { pause(); act('back'); }],
  ['home', 'back to t=0', () => { pause(); act('seek', 0); }],
  ['end', 'on to the end', () => { pause(); act('seek', app.view.horizon_ns); }],
  ['g', 'go to a typed time', () => { const t = parseDur(prompt('go to time (e.g. 1.5s, 200ms)') || ''); if (t !== null) { pause(); act('seek', t); } }],
  ['+ -', 'faster / slower', null],
  ['b', 'send a burst now (recorded in the run)', burst],
  ['↑ ↓', 'the active source\'s rate ×1.25 / ÷1.25 from now (recorded in the run)', null],
  ['p', 'predict mode: pause before a burst or a full window\'s boundary, guess, see', togglePredict],
  ['x', 'exact durations in the log (again: rounded)', toggleExact],
  ['B', 'set the burst size', () => $('burst-size').focus()],
  ['tab', 'focus the next lane (shift+tab: previous)', null],
  ['e', 'edit the scenario (ctrl+enter applies, esc leaves)', () => $('editor').focus()],
  ['a', 'add a lane by its spec', () => $('spec').focus()],
  ['r', 'restart (same traffic, same decisions)', () => { pause(); act('seek', 0); }],
  ['s', 'switch scenario', () => $('scenario').focus()],
  ['c', 'charts (SVG and PNG)', charts],
  ['j', 'run to the end: run --format json', json],
  ['?', 'this help', () => $('help-dialog').showModal()],
];
const keyMap = { ' ': 0, '.': 1, ArrowRight: 1, ',': 2, ArrowLeft: 2, Home: 3, End: 4, g: 5, b: 7, p: 9, x: 10, B: 11, e: 13, a: 14, r: 15, s: 16, c: 17, j: 18, '?': 19 };
document.addEventListener('keydown', (ev) => {
  const t = ev.target;
  const typing = t.tagName === 'TEXTAREA' || (t.tagName === 'INPUT' && t.type !== 'range') || t.tagName === 'SELECT';
  if (typing) {
    if (ev.key === 'Escape') t.blur();
    if (t.id === 'editor' && ev.key === 'Enter' && (ev.ctrlKey || ev.metaKey)) { ev.preventDefault(); apply(); }
    if (t.id === 'spec' && ev.key === 'Enter') addLane();
    if (t.id === 'guess' && ev.key === 'Enter') guess();
    if (t.id === 'guess' && ev.key === 'Escape') { act('dismiss'); status('no guess: space plays on (p leaves predict mode)'); }
    return;
  }
  if (ev.ctrlKey || ev.metaKey || ev.altKey || document.querySelector('dialog[open]')) return;
  if (ev.key === 'Tab' && app.view) {
    ev.preventDefault();
    const n = app.view.lanes.length;
    app.focus = (app.focus + (ev.shiftKey ? n - 1 : 1)) % n; show(app.view); return;
  }
  if (ev.key === '+' || ev.key === '=') { setSpeed(app.speed + 1); return; }
  if (ev.key === '-' || ev.key === '_') { setSpeed(app.speed - 1); return; }
  if (ev.key === 'ArrowUp' || ev.key === 'ArrowDown') { ev.preventDefault(); rate(ev.key === 'ArrowUp' ? 1.25 : 1 / 1.25); return; }
  const k = keyMap[ev.key];
  if (k !== undefined) { ev.preventDefault(); keys[k][2](); }
});

async function start() {
  status('loading ratelab (WebAssembly)…');
  await loadWasm(window.RATELAB_WASM, 'ratelab-ready');
  for (const b of rl('builtins')) {
    const o = document.createElement('option');
    o.value = b.name; o.textContent = b.name; o.title = b.description;
    $('scenario').appendChild(o);
  }
  $('keys').innerHTML = keys.map(([k, what]) => `<tr><td>${k}</td><td>${what}</td></tr>`).join('');
  $('scenario').onchange = () => app.selectScenario($('scenario').value);
  $('home').onclick = keys[3][2]; $('back').onclick = keys[2][2]; $('play').onclick = keys[0][2];
  $('step').onclick = keys[1][2]; $('end').onclick = keys[4][2];
  $('faster').onclick = () => setSpeed(app.speed + 1); $('slower').onclick = () => setSpeed(app.speed - 1);
  $('burst').onclick = burst; $('charts').onclick = charts; $('json').onclick = json;
  $('rate-up').onclick = () => rate(1.25); $('rate-down').onclick = () => rate(1 / 1.25);
  $('predict-mode').onclick = togglePredict; $('guess-ok').onclick = guess;
  $('embed').onclick = async () => {
    const code = embedCode();
    try { await navigator.clipboard.writeText(code); status('embed code copied: ' + code.length + ' characters (an <iframe> of embed.html)'); } catch (e) { status(code); }
  };
  window.addEventListener('resize', () => app.view && fitLanes());
  $('help').onclick = () => $('help-dialog').showModal();
  $('apply').onclick = apply; $('add').onclick = addLane;
  $('seek').oninput = () => { pause(); act('seek', Math.round(app.view.horizon_ns * $('seek').value / 1000)); };
  $('link').onclick = async () => {
    const url = location.href.split('#')[0] + '#' + rl('link');
    try { await navigator.clipboard.writeText(url); status('permalink copied: ' + url.length + ' characters'); } catch (e) { status(url); }
  };
  let timer = 0;
  $('editor').addEventListener('input', () => { clearTimeout(timer); timer = setTimeout(checkEditor, 250); });
  window.addEventListener('hashchange', () => { if (location.hash.slice(1) !== app.lastLink) openHash(); });
  if (!openHash()) {
    const name = new URLSearchParams(location.search).get('scenario');
    open(name ? rl('builtinYAML', name) : rl('defaultYAML'));
  }
  const first = rl('builtins').find((b) => b.name === app.view.scenario);
  if (first) $('scenario').value = first.name;
  setSpeed(speeds.findIndex((s) => s >= app.view.horizon_ns / 20));
  document.body.dataset.ready = '1';
}
// openHash opens the permalink in the URL's fragment, if there is one.
function openHash() {
  const frag = location.hash.slice(1);
  if (!frag) return false;
  try {
    const l = rl('decodeLink', frag);
    return !!open(l.yaml, l);
  } catch (e) { status(e.message); return false; }
}
start().catch((e) => { status('ratelab did not start: ' + e.message); document.body.dataset.ready = 'error'; });
})();
