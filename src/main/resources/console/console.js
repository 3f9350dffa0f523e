// The image-worker console: the requests of the fleet (a list, then server-sent events), one request's detail, the
// queue of this replica. Only the rows in view are in the DOM, so that ten thousand requests stay usable. Every text
// from an event is set as text, never as HTML.
'use strict';

const ROW_HEIGHT = 44;
const OVERSCAN = 10;
const API = '/console/api';

const state = {
  info: null,
  entries: new Map(),
  producers: new Set(),
  order: [],
  seq: 0,
  selected: null,
  rowCache: new Map(),
  dirty: true,
};

function el(tag, attributes, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (name === 'className') node.className = value;
    else if (name === 'text') node.textContent = value;
    else node.setAttribute(name, value === true ? '' : String(value));
  }
  for (const child of children) {
    if (child === undefined || child === null) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

async function getJson(path) {
  const answer = await fetch(API + path, { credentials: 'same-origin', cache: 'no-store' });
  if (answer.status === 401) {
    location.reload();
    throw new Error('the console needs its token');
  }
  return answer.json();
}

async function act(path, body) {
  const answer = await fetch(API + path, {
    method: 'POST',
    credentials: 'same-origin',
    headers: { 'Content-Type': 'application/json', 'X-Console-Action': '1' },
    body: JSON.stringify(body || {}),
  });
  const json = await answer.json().catch(() => ({}));
  if (!answer.ok) throw new Error(json.message || ('HTTP ' + answer.status));
  return json;
}

// An image.started names its producer only when the request named one: without, none is shown until its result says.
function producerOf(entry) {
  return entry.producer || (entry.state === 'calling' ? '' : 'default');
}

// Where producers are taken from their topics a requestId is unique within its producer: a request is its producer
// and its id, as the server keeps it.
function keyOf(entry) {
  return state.info && state.info.producersByTopic ? (entry.producer || '') + '/' + entry.requestId : entry.requestId;
}

// The address of a request, or of its image n, with its producer where ids are unique within one.
function pathOf(entry, suffix) {
  const producer = state.info && state.info.producersByTopic && entry.producer
    ? '?producer=' + encodeURIComponent(entry.producer) : '';
  return '/requests/' + encodeURIComponent(entry.requestId) + (suffix || '') + producer;
}

function take(entry) {
  const key = keyOf(entry);
  const before = state.entries.get(key);
  if (before && before.seq >= entry.seq) return;
  state.entries.set(key, entry);
  state.seq = Math.max(state.seq, entry.seq);
  const producer = producerOf(entry);
  if (producer && !state.producers.has(producer)) {
    state.producers.add(producer);
    const select = document.getElementById('filter-producer');
    select.append(el('option', { value: producer, text: producer }));
    document.getElementById('producer-names').append(el('option', { value: producer }));
  }
  if (state.selected === key) showDetail(key);
  state.dirty = true;
}

function trim() {
  const most = state.info ? state.info.maxEntries : 10000;
  if (state.entries.size <= most) return;
  const oldest = [...state.entries.values()].sort((a, b) => a.seq - b.seq);
  for (const entry of oldest.slice(0, state.entries.size - most)) {
    state.entries.delete(keyOf(entry));
    state.rowCache.delete(keyOf(entry));
  }
}

function filtered() {
  const producer = document.getElementById('filter-producer').value;
  const wanted = document.getElementById('filter-state').value;
  const shown = [];
  for (const entry of state.entries.values()) {
    if (producer && producerOf(entry) !== producer) continue;
    if (wanted && entry.state !== wanted) continue;
    shown.push(entry);
  }
  shown.sort((a, b) => b.seq - a.seq);
  return shown;
}

function time(text) {
  return text ? text.replace('T', ' ').replace(/\.\d+Z$/, 'Z') : '';
}

function cancelButton(entry) {
  if (!state.info || !state.info.actions.includes('cancel') || !state.info.cancelTopic) return null;
  if (entry.state !== 'submitted') return null;
  const button = el('button', { className: 'cancel', type: 'button', 'data-id': entry.requestId, text: 'Cancel' });
  button.addEventListener('click', (event) => {
    event.stopPropagation();
    cancel(entry.requestId, entry.producer);
  });
  return button;
}

function row(entry) {
  const key = keyOf(entry);
  const cached = state.rowCache.get(key);
  if (cached && cached.seq === entry.seq) return cached.node;
  const hasImage = (entry.state === 'completed') && entry.images && entry.images.length > 0;
  const thumb = hasImage
    ? el('img', { className: 'thumb', alt: '', loading: 'lazy',
        src: API + pathOf(entry, '/images/0') })
    : null;
  const billing = entry.billing ? entry.billing.calls + ' / ' + entry.billing.billed + ' / ' + entry.billing.unknown : '';
  const size = entry.size ? [entry.size.requested, entry.size.actual].filter(Boolean).join(' → ') : '';
  const node = el('tr', { className: 'row', 'data-id': entry.requestId, 'data-state': entry.state },
    el('td', { className: 'thumb' }, thumb),
    el('td', { className: 'id', title: entry.requestId, text: entry.requestId }),
    el('td', { className: 'producer', text: producerOf(entry) }),
    el('td', { className: 'state state-' + entry.state,
      text: entry.error && entry.state === 'failed' ? entry.error.code : entry.state }),
    el('td', { text: entry.operation || '' }),
    el('td', { text: size }),
    el('td', { text: entry.attempts === undefined ? '' : entry.attempts }),
    el('td', { title: 'calls / billed / unknown', text: billing }),
    el('td', { text: time(entry.timings && entry.timings.receivedAt) }),
    el('td', { text: entry.timings && entry.timings.gatewayMs !== undefined ? entry.timings.gatewayMs + ' ms' : '' }),
    el('td', {}, cancelButton(entry)));
  node.addEventListener('click', () => select(key));
  state.rowCache.set(key, { seq: entry.seq, node });
  return node;
}

// A row as tall as the rows out of view (styled through the DOM: the page's policy forbids inline style attributes).
function spacer(height) {
  const node = el('tr', { className: 'spacer' });
  node.style.height = height + 'px';
  return node;
}

function render() {
  if (state.dirty) {
    trim();
    state.order = filtered();
    state.dirty = false;
    document.getElementById('shown').textContent = state.order.length + ' shown of ' + state.entries.size;
  }
  const table = document.getElementById('table');
  const total = state.order.length;
  const first = Math.max(0, Math.floor(table.scrollTop / ROW_HEIGHT) - OVERSCAN);
  const last = Math.min(total, Math.ceil((table.scrollTop + table.clientHeight) / ROW_HEIGHT) + OVERSCAN);
  const rows = [spacer(first * ROW_HEIGHT)];
  for (let i = first; i < last; i++) {
    const node = row(state.order[i]);
    node.classList.toggle('selected', keyOf(state.order[i]) === state.selected);
    rows.push(node);
  }
  rows.push(spacer((total - last) * ROW_HEIGHT));
  document.getElementById('rows').replaceChildren(...rows);
}

let scheduled = false;
function schedule() {
  if (scheduled) return;
  scheduled = true;
  requestAnimationFrame(() => {
    scheduled = false;
    render();
  });
}

function field(name, value) {
  if (value === undefined || value === null || value === '') return null;
  return el('tr', {}, el('td', { className: 'note', text: name }), el('td', {}, value));
}

async function showDetail(key) {
  const detail = document.getElementById('detail');
  const known = state.entries.get(key);
  if (!known) return;
  let entry;
  try {
    entry = await getJson(pathOf(known));
  } catch (e) {
    return;
  }
  if (entry.error && !entry.requestId) {
    detail.replaceChildren(el('h2', { text: 'Request' }), el('p', { className: 'note', text: entry.message }));
    return;
  }
  const t = entry.timings || {};
  const rows = [
    field('request', entry.requestId),
    field('producer', producerOf(entry)),
    field('state', entry.state),
    field('operation', entry.operation),
    field('attempts', entry.attempts),
    field('billing', entry.billing && ('calls ' + entry.billing.calls + ', billed ' + entry.billing.billed
      + ', unknown ' + entry.billing.unknown)),
    field('size asked', entry.size && entry.size.requested),
    field('size sent', entry.size && entry.size.sent),
    field('size actual', entry.size && entry.size.actual),
    field('size matched', entry.size && entry.size.matched !== undefined ? String(entry.size.matched) : null),
    field('variants', entry.variants && (entry.variants.delivered + ' of ' + entry.variants.requested
      + ', ' + entry.variants.failed + ' failed')),
    field('received', time(t.receivedAt)),
    field('first call', time(t.startedAt)),
    field('ended', time(t.completedAt)),
    field('queued', t.queuedMs !== undefined ? t.queuedMs + ' ms' : null),
    field('gateway', t.gatewayMs !== undefined ? t.gatewayMs + ' ms' : null),
    field('store', t.storeMs !== undefined ? t.storeMs + ' ms' : null),
  ];
  if (entry.error) {
    rows.push(field('error', entry.error.code + ': ' + entry.error.message));
    rows.push(field('retryable', String(entry.error.retryable)));
    rows.push(field('gateway status', entry.error.gatewayStatus));
  }
  const parts = [el('h2', { text: 'Request' }), el('table', { id: 'detail-fields' }, ...rows)];
  if (entry.error && entry.error.gatewayBody) {
    parts.push(el('p', { className: 'note', text: "The gateway's answer" }),
      el('pre', { id: 'gateway-body', text: entry.error.gatewayBody }));
  }
  (entry.images || []).forEach((image, i) => {
    parts.push(el('img', { className: 'full', alt: 'image ' + (i + 1),
      src: API + pathOf(entry, '/images/' + i) }));
    parts.push(el('table', {},
      field('key', image.key),
      field('type', image.contentType),
      field('pixels', image.width + 'x' + image.height),
      field('bytes', image.bytes),
      field('sha256', el('code', { text: image.sha256 || '' }))));
  });
  const cancel = cancelButton(entry);
  if (cancel) parts.push(cancel);
  detail.replaceChildren(...parts);
}

function select(key) {
  state.selected = key;
  showDetail(key);
  schedule();
}

async function cancel(requestId, producer) {
  try {
    await act('/requests/' + encodeURIComponent(requestId) + '/cancel', producer ? { producer } : {});
    document.getElementById('sent').textContent = 'cancel of ' + requestId + ' published';
  } catch (e) {
    document.getElementById('sent').textContent = 'not cancelled: ' + e.message;
  }
}

async function refreshQueue() {
  let queue;
  try {
    queue = await getJson('/queue');
  } catch (e) {
    return;
  }
  const parts = [];
  // A producer's view has no counts nor rate of the whole replica (they tell of the other producers): its lines carry
  // their own rates instead.
  parts.push(el('p', {},
    'partitions owned: ' + (queue.partitionsOwned ?? '?') + ' of ' + (queue.partitionsTotal ?? '?')
    + (queue.inProgress === undefined ? '' : ' · in progress: ' + queue.inProgress + ' · read ahead: ' + queue.readAhead
      + ' · calls/s: ' + (queue.callsPerSecond ?? 'none lately'))));
  parts.push(el('p', { id: 'intake', className: queue.intake.paused ? 'state-failed' : '' },
    queue.intake.paused ? 'intake paused: ' + queue.intake.reasons.join('; ') : 'intake running'));
  if (queue.lines.length) {
    parts.push(el('table', { id: 'lines' },
      el('tr', {}, el('th', { text: 'lane' }), el('th', { text: 'producer' }), el('th', { text: 'waiting' }),
        el('th', { text: 'served/s' }), el('th', { text: '' })),
      ...queue.lines.map((line) => el('tr', {},
        el('td', { text: line.lane }), el('td', { text: line.producer }), el('td', { text: line.waiting }),
        el('td', { text: line.callsPerSecond ?? '' }),
        el('td', { text: line.overCap ? 'over its cap' : '' })))));
  } else {
    parts.push(el('p', { className: 'note', text: 'No request waits for a call here.' }));
  }
  for (const cap of queue.spend) {
    parts.push(el('p', {}, (cap.producer ? 'cap of ' + cap.producer : 'fleet cap') + ': ' + cap.usedCalls
      + ' of ' + cap.maxCalls + ' calls in the window (' + cap.window + ')' + (cap.held ? ', ' + cap.held + ' held' : '')));
  }
  if (queue.queued.length) {
    parts.push(el('p', { className: 'note', text: 'First of each line' }));
    parts.push(el('table', { id: 'queued' }, ...queue.queued.map((q) => {
      const cells = [el('td', { text: q.position }), el('td', { className: 'id', text: q.requestId }),
        el('td', { text: q.producer + (q.lane === 'priority' ? ' (priority)' : '') })];
      if (state.info && state.info.actions.includes('cancel') && state.info.cancelTopic) {
        const button = el('button', { className: 'cancel', type: 'button', 'data-id': q.requestId, text: 'Cancel' });
        button.addEventListener('click', () => cancel(q.requestId, q.producer));
        cells.push(el('td', {}, button));
      }
      return el('tr', { 'data-queued': q.requestId }, ...cells);
    })));
  }
  if (queue.calling.length) {
    parts.push(el('p', { className: 'note', text: 'Calling: ' + queue.calling.length }));
  }
  document.getElementById('queue-body').replaceChildren(...parts);
}

function follow() {
  const live = document.getElementById('live');
  const source = new EventSource(API + '/events?after=' + state.seq);
  source.addEventListener('open', () => {
    live.textContent = 'live';
    live.className = 'live on';
  });
  source.addEventListener('entries', (event) => {
    for (const entry of JSON.parse(event.data)) take(entry);
    document.getElementById('counts').textContent = state.entries.size + ' requests';
    schedule();
  });
  source.addEventListener('error', () => {
    live.textContent = 'reconnecting';
    live.className = 'live off';
  });
}

async function start() {
  state.info = await getJson('/info');
  document.getElementById('logout').hidden = !state.info.guarded;
  if (state.info.producer) {
    // A producer's own view: it sends as itself only.
    const producer = document.getElementById('producer');
    producer.value = state.info.producer;
    producer.readOnly = true;
    document.title = 'image-worker console: ' + state.info.producer;
  }
  if (state.info.actions.includes('submit')) {
    const form = document.getElementById('submit-form');
    form.hidden = false;
    form.addEventListener('submit', async (event) => {
      event.preventDefault();
      const sent = document.getElementById('sent');
      try {
        const answer = await act('/requests', {
          prompt: document.getElementById('prompt').value,
          producer: document.getElementById('producer').value,
          size: document.getElementById('size').value,
          count: Number(document.getElementById('count').value || 1),
        });
        sent.textContent = 'sent ' + answer.requestId;
        sent.dataset.requestId = answer.requestId;
      } catch (e) {
        sent.textContent = 'not sent: ' + e.message;
      }
    });
  }
  const list = await getJson('/requests');
  for (const entry of list.entries.slice().reverse()) take(entry);
  state.seq = Math.max(state.seq, list.seq);
  document.getElementById('counts').textContent = state.entries.size + ' requests';
  document.getElementById('table').addEventListener('scroll', schedule, { passive: true });
  for (const id of ['filter-producer', 'filter-state']) {
    document.getElementById(id).addEventListener('change', () => {
      state.dirty = true;
      document.getElementById('table').scrollTop = 0;
      schedule();
    });
  }
  window.addEventListener('resize', schedule);
  schedule();
  follow();
  refreshQueue();
  setInterval(refreshQueue, 2000);
}

document.addEventListener('DOMContentLoaded', start);
