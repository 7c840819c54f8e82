// The review card's DOM, from the patch a tool result carries for the host (docs/review-card.md#data). Pure
// rendering: no bridge, no network; card.js wires it to the host, and the benchmark's static floor page uses it
// alone. Text goes in as text nodes only, never as HTML.

const STATUS = { added: 'added', modified: 'modified', deleted: 'deleted', renamed: 'renamed' };

/** An element with attributes and children (strings become text nodes). */
export function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs ?? {})) {
    if (v === false || v === undefined) continue;
    if (k === 'class') e.className = v;
    else e.setAttribute(k, v === true ? '' : String(v));
  }
  for (const c of children) if (c !== null && c !== undefined) e.append(c);
  return e;
}

/** The header: what the card shows, its totals and the review points. */
export function header(data) {
  const files = data.files ?? [];
  let added = 0;
  let removed = 0;
  for (const f of files) {
    added += f.added ?? 0;
    removed += f.removed ?? 0;
  }
  const n = files.length;
  const sub = data.point ? `Review point ${data.since ?? 'start'} → ${data.point}` : 'This edit';
  return el(
    'header',
    {},
    // `elementtiming`: when the card's first data was painted (bench/card-bench.mjs reads it).
    el('h1', { elementtiming: 'card' }, `${n} file${n === 1 ? '' : 's'} changed `, counts(added, removed)),
    el('p', { class: 'sub' }, sub),
  );
}

function counts(added, removed) {
  return el(
    'span',
    { class: 'count' },
    el('span', { class: 'plus', 'aria-label': `${added} lines added` }, `+${added}`),
    ' ',
    el('span', { class: 'minus', 'aria-label': `${removed} lines removed` }, `−${removed}`),
  );
}

/** One file: a button that folds its hunks open and shut, and the hunks, rendered on first open. */
export function fileItem(f, i, onMore) {
  const id = `file-${i}`;
  const body = el('div', {
    class: 'diff',
    id,
    hidden: true,
    role: 'region',
    'aria-label': `Diff of ${f.path}`,
  });
  const chev = el('span', { class: 'chev', 'aria-hidden': 'true' }, '▸');
  const button = el(
    'button',
    { class: 'file', type: 'button', 'aria-expanded': 'false', 'aria-controls': id },
    chev,
    el('span', { class: 'st' }, STATUS[f.status] ?? f.status),
    el('span', { class: 'path' }, f.path, f.from ? el('span', { class: 'from' }, ` ← ${f.from}`) : null),
    f.binary ? el('span', { class: 'count' }, 'binary') : counts(f.added ?? 0, f.removed ?? 0),
  );
  let drawn = false;
  button.addEventListener('click', () => {
    const open = button.getAttribute('aria-expanded') !== 'true';
    if (open && !drawn) {
      drawHunks(body, f, onMore);
      drawn = true;
    }
    button.setAttribute('aria-expanded', String(open));
    chev.textContent = open ? '▾' : '▸';
    body.hidden = !open;
  });
  return el('li', { 'data-path': f.path }, button, body);
}

/** The unified hunks of one file as coloured rows with old and new line numbers. */
export function drawHunks(into, f, onMore) {
  if (f.binary) return into.append(el('p', { class: 'note more' }, 'Binary file: no text diff.'));
  const frag = document.createDocumentFragment();
  let a = 0;
  let b = 0;
  for (const line of (f.hunks ?? '').split('\n')) {
    if (line === '') continue;
    const m = /^@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@/.exec(line);
    if (m) {
      a = Number(m[1]);
      b = Number(m[2]);
      frag.append(row('hunk', '', '', line));
    } else if (line[0] === '+') frag.append(row('add', '', b++, line));
    else if (line[0] === '-') frag.append(row('del', a++, '', line));
    else if (line[0] === '\\') frag.append(row('', '', '', line));
    else frag.append(row('', a++, b++, line));
  }
  into.append(frag);
  if (f.cut) {
    const more = el('div', { class: 'more' }, el('p', { class: 'note' }, 'This diff is cut here.'));
    if (onMore) more.append(el('button', { class: 'btn', type: 'button' }, 'Load the rest'));
    more.querySelector('button')?.addEventListener('click', () => onMore());
    into.append(more);
  }
}

function row(kind, a, b, text) {
  return el(
    'div',
    { class: kind ? `row ${kind}` : 'row' },
    el('span', { class: 'n' }, String(a)),
    el('span', { class: 'n' }, String(b)),
    el('span', { class: 't' }, text),
  );
}

/** The note under a cut change: how much is shown. */
export function cutNote(cut) {
  const kb = (n) => `${Math.round(n / 1024)} KB`;
  return el(
    'p',
    { class: 'note' },
    `Large change: ${kb(cut.shownBytes)} of ${kb(cut.totalBytes)} of diff shown; files marked cut load the rest on request.`,
  );
}

/** The whole card (no bridge): header, cut note and the file list. */
export function renderCard(root, data, onMore) {
  root.replaceChildren(header(data));
  if (data.cut) root.append(cutNote(data.cut));
  const list = el('ul', { class: 'files' });
  (data.files ?? []).forEach((f, i) => list.append(fileItem(f, i, f.cut && onMore ? onMore : undefined)));
  root.append(list);
}
