"""The replay page's HTML, styles and script (``client.replay`` fills in the data).

The script draws the position the reader steps to from the JSON the page carries, with DOM
calls only (``textContent``, ``createElementNS``: no ``innerHTML``), so nothing in the data is
ever read as markup. The Content-Security-Policy allows exactly this script and these styles
(by their SHA-256) and forbids everything else: no request leaves the page.
"""

from __future__ import annotations

import base64
import hashlib

STYLE = """
:root{--felt:#0f5132;--ink:#1b1b1b;--paper:#fdfcf7;--muted:#5c6670;--gold:#b8860b}
*{box-sizing:border-box}
body{margin:0;font:15px/1.4 system-ui,sans-serif;color:var(--ink);background:#eef1ee}
header,main,footer{max-width:64rem;margin:0 auto;padding:.5rem .75rem}
h1{font-size:1.1rem;margin:.3rem 0;overflow-wrap:anywhere}
h2{font-size:1rem;margin:.8rem 0 .3rem}
.sub{color:var(--muted);font-size:.85rem;overflow-wrap:anywhere}
nav{position:sticky;top:0;z-index:2;display:flex;flex-wrap:wrap;gap:.3rem;align-items:center;
padding:.4rem .75rem;background:#dfe6e1;border-bottom:1px solid #c5cec8}
nav button{font:inherit;min-width:2.6rem;min-height:2.4rem;border:1px solid #8a968f;
border-radius:.4rem;background:#fff;cursor:pointer}
nav button:disabled{opacity:.4;cursor:default}
#where{margin-left:.4rem;font-variant-numeric:tabular-nums}
.move{background:#fff;border-left:4px solid var(--felt);padding:.4rem .6rem;border-radius:.3rem}
.move .by{font-size:.85rem;color:var(--muted);overflow-wrap:anywhere}
.move.attested{border-color:#8a2be2}.move.covered,.move.bot{border-color:var(--gold)}
.events{margin:.2rem 0 0 1.1rem;padding:0}
.events .talk{font-style:italic}
.table{background:var(--felt);color:#fff;border-radius:.6rem;padding:.5rem .6rem;margin:.5rem 0}
.row{display:flex;flex-wrap:wrap;align-items:center;gap:.2rem .5rem;margin:.25rem 0}
.label{min-width:5.5rem;font-weight:600}
.seat{border-top:1px solid #ffffff30;padding:.3rem 0}
.seat.actor .label{color:#ffd54f}
.cards{display:flex;flex-wrap:wrap;gap:2px;align-items:flex-end}
.meld{display:flex;align-items:center;gap:.4rem;margin:.15rem 0;flex-wrap:wrap}
.meld .cards .card+.card{margin-left:-1.05rem}
.tag{font-size:.8rem;background:#ffffff26;border-radius:.3rem;padding:0 .3rem}
.canasta{background:var(--gold);color:#fff}
.frozen{background:#b3261e;color:#fff}
.card{width:2.3rem;height:3.22rem;flex:none}
.card rect{fill:var(--paper);stroke:#555;stroke-width:1}
.card.wild rect{stroke:#8a2be2;stroke-width:2.5}
.card text{font:700 17px system-ui,sans-serif}
.card .red{fill:#c62828}.card .black{fill:#111}.card .joker{fill:#8a2be2}
.card.back rect{fill:#1e4fa3;stroke:#fff}
.card.back path{fill:none;stroke:#ffffff80;stroke-width:1.2}
.status{font-weight:600}
.result{background:#fff8e1;border-radius:.4rem;padding:.4rem .6rem;margin:.5rem 0}
.result p{margin:.15rem 0}
table{border-collapse:collapse;width:100%;font-variant-numeric:tabular-nums}
th,td{border-bottom:1px solid #ccd;padding:.2rem .4rem;text-align:right}
th:first-child,td:first-child{text-align:left}
tr.now{background:#fff3c4}
.sheet{overflow-x:auto}
.verified p{margin:.15rem 0;overflow-wrap:anywhere;font-size:.9rem}
code{font-size:.85rem;overflow-wrap:anywhere}
@media (max-width:480px){body{font-size:14px}.card{width:1.9rem;height:2.66rem}
.label{min-width:100%}.meld .cards .card+.card{margin-left:-.95rem}}
"""

SCRIPT = """
'use strict';
const D = JSON.parse(document.getElementById('replay-data').textContent);
const P = D.positions, NS = 'http://www.w3.org/2000/svg';
const SUIT = {
  h: 'M5 9.4C2 6.8.5 5.2.5 3.2.5 1.6 1.7.5 3 .5c1 0 1.7.6 2 1.4.3-.8 1-1.4 2-1.4 1.3 0 2.5 1.1'
    + ' 2.5 2.7 0 2-1.5 3.6-4.5 6.2z',
  d: 'M5 .3 9 5 5 9.7 1 5z',
  s: 'M5 .4C3 2.6.5 4.4.5 6.3c0 1.4 1.1 2.3 2.3 2.3.8 0 1.5-.4 1.9-1L4 9.7h2l-.7-2.1c.4.6 1.1'
    + ' 1 1.9 1 1.2 0 2.3-.9 2.3-2.3C9.5 4.4 7 2.6 5 .4z',
  c: 'M2.8 3a2.2 2.2 0 1 0 4.4 0 2.2 2.2 0 1 0-4.4 0M.6 6.3a2.2 2.2 0 1 0 4.4 0 2.2 2.2 0 1'
    + ' 0-4.4 0M5 6.3a2.2 2.2 0 1 0 4.4 0 2.2 2.2 0 1 0-4.4 0M4.5 6 4 9.7h2L5.5 6z',
  j: 'M5 .5l1.2 3.3 3.5.1-2.8 2.1 1 3.4L5 7.4 2.1 9.4l1-3.4L.3 3.9l3.5-.1z'
};
let at = 0;
function el(tag, cls, text, parent) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined && text !== null) e.textContent = String(text);
  if (parent) parent.appendChild(e);
  return e;
}
function svg(tag, attrs, parent) {
  const e = document.createElementNS(NS, tag);
  for (const k of Object.keys(attrs)) e.setAttribute(k, attrs[k]);
  if (parent) parent.appendChild(e);
  return e;
}
function card(c) {
  const s = svg('svg', {viewBox: '0 0 50 70', class: 'card', role: 'img'});
  svg('rect', {x: 1, y: 1, width: 48, height: 68, rx: 5}, s);
  if (!c) {
    s.classList.add('back');
    s.setAttribute('aria-label', 'face down');
    svg('path', {d: 'M8 8h34v54H8zM8 8l34 54M42 8 8 62'}, s);
    return s;
  }
  const joker = c === 'jk', suit = joker ? 'j' : c.slice(-1);
  const rank = joker ? 'JK' : c.slice(0, -1).toUpperCase();
  const colour = joker ? 'joker' : ('dh'.includes(suit) ? 'red' : 'black');
  if (joker || rank === '2') s.classList.add('wild');
  s.setAttribute('data-card', c);
  s.setAttribute('aria-label', c);
  svg('text', {x: 5, y: 20, class: colour}, s).textContent = rank;
  svg('path', {d: SUIT[suit], class: colour, transform: 'translate(20 26) scale(2.5)'}, s);
  return s;
}
function cards(text, parent, cls) {
  const box = el('span', 'cards' + (cls ? ' ' + cls : ''), null, parent);
  if (text) for (const c of text.split(' ')) box.appendChild(card(c));
  return box;
}
function backs(n, parent) {
  const box = el('span', 'cards', null, parent);
  for (let i = 0; i < n; i++) box.appendChild(card(null));
  return box;
}
function row(label, parent, cls) {
  const r = el('div', 'row' + (cls ? ' ' + cls : ''), null, parent);
  el('span', 'label', label, r);
  return r;
}
function plural(n, w) { return n + ' ' + w + (n === 1 ? '' : 's'); }
function draw() {
  const p = P[at], m = D.match;
  let title = m.preset;
  if (p.hand) title += ' \\u00b7 hand ' + p.hand;
  if (p.hand && m.hands_per_match) title += ' of ' + m.hands_per_match;
  if (!m.hands_per_match) title += ' \\u00b7 target ' + p.target;
  document.getElementById('where').textContent =
    (at ? 'move ' + at : 'start') + ' of ' + (P.length - 1);
  const move = document.getElementById('move');
  move.replaceChildren();
  move.className = 'move' + (p.mover ? ' ' + p.mover.kind : '');
  if (p.mover) {
    const what = '#' + p.mover.seq + ' ' + p.mover.name + ': ' + p.mover.actions.join('; ');
    el('div', 'what', what, move);
    el('div', 'by', p.mover.by, move);
  } else {
    el('div', 'what', 'Before the first deal', move);
  }
  const ev = el('ul', 'events', null, move);
  for (const e of p.events) el('li', null, e, ev);
  for (const line of p.talk || []) el('li', 'talk', line, ev);
  const t = document.getElementById('table');
  t.replaceChildren();
  el('div', 'row', title, t);
  const sc = row('Score', t, 'scores');
  D.columns.forEach((name, i) => {
    let s = name + ': ' + p.scores[i];
    if (p.phase !== 'match_over') s += ' (opens with ' + p.minimums[i] + ')';
    el('span', 'tag', s, sc);
  });
  D.seats.forEach((seat, i) => {
    const s = p.seats[i], tags = [];
    if (seat.bot) tags.push('bot');
    if (p.dealer === i) tags.push('dealer');
    if (p.actor === i) tags.push('to move');
    const r = row(seat.name + (tags.length ? ' (' + tags.join(', ') + ')' : ''), t,
      'seat' + (p.actor === i ? ' actor' : ''));
    r.id = 'seat-' + i;
    if (!p.hand) return;
    el('span', 'count', plural(s.count, 'card'), r);
    if (s.cards !== undefined) cards(s.cards, r, 'hand'); else backs(s.count, r);
    if (s.foot !== undefined) {
      el('span', 'tag', s.foot ? 'foot ' + s.foot : 'on the foot', r);
      if (s.foot_cards) cards(s.foot_cards, r, 'foot'); else if (s.foot) backs(1, r);
    }
  });
  if (p.stock !== null) {
    const r = row('Stock', t, 'stock');
    backs(1, r);
    el('span', null, plural(p.stock, 'card'), r);
    if (p.talon.length) el('span', 'tag', 'talon ' + p.talon.join(' + '), r);
    const pr = row('Pile', t, 'pile');
    if (p.pile) cards(p.pile, pr);
    el('span', null, p.pile_size ? plural(p.pile_size, 'card') : 'empty', pr);
    if (p.frozen) el('span', 'tag frozen', 'FROZEN for the side to move: ' + p.frozen, pr);
    if (p.blocked) el('span', 'tag frozen', 'BLOCKED: a black three is on top', pr);
  }
  p.sides.forEach((side, i) => {
    const facts = [side.opened ? plural(side.canastas, 'canasta') : 'not opened'];
    const r = row(side.seats, t, 'side');
    r.id = 'side-' + i;
    el('span', null, facts.join(', '), r);
    if (side.threes) cards(side.threes, r, 'threes');
    for (const meld of side.melds) {
      const mr = el('div', 'meld', null, t);
      el('span', 'tag', meld.rank + ' \\u00d7' + meld.cards.split(' ').length, mr);
      cards(meld.cards, mr);
      if (meld.canasta) el('span', 'tag canasta', meld.canasta, mr);
    }
  });
  const res = document.getElementById('result');
  res.replaceChildren();
  res.hidden = !p.result;
  for (const line of p.result || []) el('p', null, line, res);
  document.getElementById('status').textContent = p.status;
  const hands = document.querySelectorAll('#sheet tbody tr');
  hands.forEach((tr) => { tr.hidden = Number(tr.dataset.at) > at; tr.classList.remove('now'); });
  const now = Array.from(hands).filter((tr) => !tr.hidden).pop();
  if (now) now.classList.add('now');
  document.getElementById('first').disabled = document.getElementById('prev').disabled = !at;
  document.getElementById('next').disabled = document.getElementById('last').disabled =
    at === P.length - 1;
  try { history.replaceState(null, '', '#' + at); } catch (e) { /* a sandboxed frame */ }
}
function go(n) { at = Math.max(0, Math.min(P.length - 1, n)); draw(); }
function hand(step) {
  let n = at + step;
  while (n > 0 && n < P.length - 1 && !(P[n].mover && P[n].mover.actions[0].startsWith('cut ')))
    n += step;
  go(n);
}
function setup() {
  const m = D.match;
  document.getElementById('subtitle').textContent = m.preset + ', ' + m.length + ', began '
    + m.started + ' \\u00b7 ' + D.result;
  const sheet = document.getElementById('sheet');
  const head = el('tr', null, null, el('thead', null, null, sheet));
  el('th', null, 'Hand', head);
  for (const c of D.columns) el('th', null, c, head);
  const body = el('tbody', null, null, sheet);
  for (const h of D.hands) {
    const tr = el('tr', null, null, body);
    tr.dataset.at = P.findIndex((p) => p.result && p.hand === h.number);
    el('td', null, h.number, tr);
    h.totals.forEach((v, i) => {
      el('td', null, (v >= 0 ? '+' : '') + v + ' = ' + h.cumulative[i], tr);
    });
  }
  const v = document.getElementById('verified');
  for (const line of D.verified) el('p', null, line, v);
  const keys = el('ul', null, null, v);
  for (const s of D.seats) el('li', null, 'seat ' + s.seat + ': ' + s.name + (s.bot ? ' (bot)' : '')
    + ', key ' + s.key, keys);
  el('li', null, 'server key ' + m.server_key + ', bot key ' + m.bot_key
    + (m.attest_key ? ', attest key ' + m.attest_key : ''), keys);
  const buttons = {first: () => go(0), prevhand: () => hand(-1), prev: () => go(at - 1),
    next: () => go(at + 1), nexthand: () => hand(1), last: () => go(P.length - 1)};
  for (const id of Object.keys(buttons)) {
    document.getElementById(id).addEventListener('click', buttons[id]);
  }
  const keymap = {ArrowLeft: buttons.prev, ArrowRight: buttons.next, Home: buttons.first,
    End: buttons.last, PageUp: buttons.prevhand, PageDown: buttons.nexthand};
  document.addEventListener('keydown', (e) => {
    const f = keymap[e.key];
    if (f && !e.altKey && !e.ctrlKey && !e.metaKey) { e.preventDefault(); f(); }
  });
  const start = Number(location.hash.slice(1));
  go(Number.isInteger(start) ? start : 0);
}
setup();
"""

_BODY = """<nav aria-label="Replay">
<button id="first" title="Start (Home)" aria-label="Start">|&#x25C0;</button>
<button id="prevhand" title="Previous hand (Page Up)"
 aria-label="Previous hand">&#x25C0;&#x25C0;</button>
<button id="prev" title="Previous move (Left arrow)" aria-label="Previous move">&#x25C0;</button>
<button id="next" title="Next move (Right arrow)" aria-label="Next move">&#x25B6;</button>
<button id="nexthand" title="Next hand (Page Down)"
 aria-label="Next hand">&#x25B6;&#x25B6;</button>
<button id="last" title="End (End)" aria-label="End">&#x25B6;|</button>
<span id="where"></span>
</nav>
<main>
<section id="move" class="move" aria-live="polite"></section>
<section id="table" class="table"></section>
<section id="result" class="result" hidden></section>
<p id="status" class="status"></p>
<h2>Scores after each hand</h2>
<div class="sheet"><table id="sheet"></table></div>
<h2>Verification</h2>
<section id="verified" class="verified"></section>
</main>
<footer class="sub">Made by <code>canasta replay</code> from a transcript that verified: every
signature, the chain, the receipts, every deal and every move replayed by the rules engine.
Check the file itself with <code>canasta verify</code>.</footer>
"""


def _hash(text: str) -> str:
    digest = hashlib.sha256(text.encode()).digest()
    return "'sha256-" + base64.b64encode(digest).decode("ascii") + "'"


CSP = (
    "default-src 'none'; "
    f"script-src {_hash(SCRIPT)}; "
    f"style-src {_hash(STYLE)}; "
    "img-src 'none'; connect-src 'none'; font-src 'none'; base-uri 'none'; form-action 'none'"
)
"""Nothing may be fetched or sent; only this page's own script and styles run."""


def document(title: str, data_json: str) -> str:
    """The page: ``title`` already escaped for HTML, ``data_json`` safe inside a script element
    (``client.replay.data_json``)."""
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        '<meta name="referrer" content="no-referrer">\n'
        f"<title>{title}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n"
        f'<header><h1>{title}</h1><p id="subtitle" class="sub"></p></header>\n'
        f"{_BODY}"
        f'<script type="application/json" id="replay-data">{data_json}</script>\n'
        f"<script>{SCRIPT}</script>\n</body>\n</html>\n"
    )
