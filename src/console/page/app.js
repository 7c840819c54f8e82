// The operator's console page (docs/console.md): one event stream from /api/events, rendered with plain DOM
// calls. Every value from the server goes in as text (textContent, attributes), never as markup; every value
// that comes from outside the server (a command, a path, output, a client's name, a model's reason, a host) goes
// through shown(): src/core/text/visible-text.ts (bundled in) makes what could hide, reorder or cut it visible, and
// each such field is isolated from the page's own text in a <bdi>. State changes are POSTs carrying the
// session's CSRF token.
import { grouped, visibleText } from '../../core/text/visible-text.js';

const csrf = document.querySelector('meta[name="csrf"]').getAttribute('content');
const S = {
  activity: [],
  skipped: 0,
  approvals: [],
  commands: [],
  edits: [],
  points: [],
  connection: null,
  safety: null,
  network_blocks: [],
  workspaces: undefined,
};
/** What the operator did on each workspace's card (a result, a loaded diff), kept across re-renders. */
const W = new Map();
const $ = (id) => document.getElementById(id);

function h(tag, attrs, ...kids) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k === 'class') el.className = v;
    else if (k.startsWith('on')) el.addEventListener(k.slice(2), v);
    else el.setAttribute(k, v === true ? '' : String(v));
  }
  for (const kid of kids.flat(Infinity)) {
    if (kid === undefined || kid === null || kid === false) continue;
    el.append(kid instanceof Node ? kid : document.createTextNode(String(kid)));
  }
  return el;
}

/** How much of each kind of field is shown (a longer one shows its start and its end around a count). */
const SHOWN = { command: 3000, name: 120, line: 400, reason: 2000, block: 64 * 1024 };

/**
 * Text from outside the server, as a <bdi>: escapes and counts (src/core/text/visible-text.ts) drawn as marks.
 * `mode` is line, command or block; `omitted` counts characters the server already left out of the middle.
 */
function shown(text, mode, max, omitted) {
  const v = visibleText(String(text ?? ''), { mode, max, omitted });
  const el = h('bdi', { class: 'v', 'data-length': v.length });
  for (const p of v.parts) el.append(p.mark ? h('span', { class: 'esc' }, p.text) : p.text);
  return el;
}

function time(ms) {
  return new Date(ms).toLocaleTimeString([], {
    hour12: false,
    hour: '2-digit',
    minute: '2-digit',
    second: '2-digit',
  });
}

async function post(url, body) {
  const r = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-csrf-token': csrf },
    body: JSON.stringify(body || {}),
  });
  let data = {};
  try {
    data = await r.json();
  } catch {
    /* an empty answer */
  }
  if (!r.ok) throw new Error(data.message || `HTTP ${r.status}`);
  return data;
}

function say(el, text, bad) {
  el.textContent = text;
  el.className = `message ${bad ? 'fail' : 'okc'}`;
}

/*
 * The last answer of a card's button, by card ("edit:e3", "command:c1", "point:p2"). A card is drawn again
 * whenever its list changes — often because of the very action answered (a revert's own edit, a kill's exit),
 * and that can come before the answer does — so the answer is kept and shown in whichever card is on the page.
 */
const ANSWERS = new Map();
const MAX_ANSWERS = 200;

/** A card's status line, showing the answer kept for `key` if there is one. */
function statusLine(key) {
  const el = h('p', { class: 'message', role: 'status', 'data-answer': key });
  const kept = ANSWERS.get(key);
  if (kept) say(el, kept.text, kept.bad);
  return el;
}

/** Says `text` in the status line of card `key` wherever that card now is, and keeps it for its next drawing. */
function answer(key, text, bad) {
  ANSWERS.delete(key);
  ANSWERS.set(key, { text, bad });
  if (ANSWERS.size > MAX_ANSWERS) ANSWERS.delete(ANSWERS.keys().next().value);
  for (const el of document.querySelectorAll('p[data-answer]'))
    if (el.getAttribute('data-answer') === key) say(el, text, bad);
}

/* ---------- approvals ---------- */
function renderApprovals() {
  const list = $('approval-list');
  list.replaceChildren(...S.approvals.map(approvalCard));
  $('approvals-empty').hidden = S.approvals.length > 0;
  const badge = $('approval-count');
  badge.hidden = S.approvals.length === 0;
  badge.textContent = String(S.approvals.length);
  badge.setAttribute('aria-label', `${S.approvals.length} waiting`);
}

function approvalCard(a) {
  const msg = h('p', { class: 'message', role: 'status' });
  const idp = `ap-${a.id}`;
  const note = h('input', { id: `${idp}-note`, type: 'text', placeholder: 'optional, shown to the model' });
  const minutes = h(
    'select',
    { id: `${idp}-min` },
    h('option', { value: '15' }, '15 minutes'),
    h('option', { value: '60' }, '1 hour'),
    h('option', { value: '240' }, '4 hours'),
  );
  const code = a.needsCode
    ? h('input', { id: `${idp}-code`, type: 'text', inputmode: 'text', autocomplete: 'off', size: 8 })
    : null;
  const act = async (action, withMinutes) => {
    try {
      await post(`/api/approvals/${encodeURIComponent(a.id)}/decide`, {
        action,
        note: note.value || undefined,
        minutes: withMinutes ? Number(minutes.value) : undefined,
        code: code ? code.value.trim() : undefined,
      });
      say(msg, action === 'approve' ? 'Approved.' : 'Denied.');
    } catch (e) {
      say(msg, e.message, true);
    }
  };
  const kind = { command: 'Command', network: 'Network', signin: 'Sign-in' }[a.kind] || a.kind;
  return h(
    'li',
    { 'data-approval': a.id },
    h('strong', {}, `${kind} · request ${a.id}`),
    h('span', { class: 'muted' }, ` · ${time(a.created)}`),
    h('dl', { class: 'pairs' }, approvalFields(a)),
    code
      ? h('p', {}, h('label', { for: `${idp}-code` }, 'Pairing code shown on the sign-in page '), code)
      : null,
    h('p', {}, h('label', { for: `${idp}-note` }, 'Note '), note),
    h(
      'div',
      { class: 'actions' },
      h('button', { class: 'primary', type: 'button', onclick: () => act('approve', false) }, 'Approve once'),
      a.kind === 'signin'
        ? null
        : [
            h('label', { for: `${idp}-min`, class: 'muted' }, 'for this client for'),
            minutes,
            h('button', { type: 'button', onclick: () => act('approve', true) }, 'Approve for this client'),
          ],
      h('button', { class: 'danger', type: 'button', onclick: () => act('deny', false) }, 'Deny'),
    ),
    msg,
  );
}

function field(label, value) {
  return [h('dt', {}, label), h('dd', {}, value)];
}

/** The command an approval lets run, exactly, with its length; its box never scrolls (style.css). */
function runsField(text, omitted) {
  return field(
    `Runs, if approved (${grouped((text || '').length + (omitted || 0))} characters)`,
    h('pre', { class: 'mono subject' }, shown(text, 'command', SHOWN.command, omitted)),
  );
}

/**
 * What the operator decides on, each in its own labelled field: the command exactly as it will run (a network
 * approval through the proxy: its hosts, then its command), or a sign-in's application and redirect host.
 */
function approvalFields(a) {
  const line = (text, omitted) => h('span', { class: 'mono' }, shown(text, 'line', SHOWN.line, omitted));
  const subject =
    a.kind === 'signin'
      ? field('Redirect host', line(a.subject, a.omitted))
      : a.command !== undefined
        ? [field('Hosts', line(a.subject, a.omitted)), runsField(a.command, a.commandOmitted)]
        : runsField(a.subject, a.omitted);
  return [
    field(a.kind === 'signin' ? 'Application' : 'Client', shown(a.client, 'line', SHOWN.name)),
    subject,
    field('Why you are asked', shown(a.why, 'line', SHOWN.line)),
    a.reason ? field('The model says', shown(a.reason, 'line', SHOWN.reason)) : [],
  ];
}

/* ---------- activity ---------- */
function renderActivity() {
  const q = $('activity-filter').value.trim().toLowerCase();
  const failures = $('activity-errors').checked;
  const rows = [];
  for (let i = S.activity.length - 1; i >= 0 && rows.length < 200; i--) {
    const e = S.activity[i];
    const text =
      e.kind === 'call'
        ? `${e.client} ${e.tool} ${e.summary} ${e.error || ''}`
        : e.kind === 'connected'
          ? `${e.client} connected ${e.name || ''} ${e.version || ''}`
          : `${e.client} ${e.what}`;
    const failed = e.kind === 'refused' || (e.kind === 'call' && !e.ok);
    if (failures && !failed) continue;
    if (q && !text.toLowerCase().includes(q)) continue;
    rows.push(activityRow(e));
  }
  $('activity-list').replaceChildren(...rows);
  renderClients();
  $('activity-skipped').hidden = S.skipped === 0;
  $('activity-skipped').textContent =
    `${S.skipped} calls came too fast to list here (the audit log has them all).`;
}

/* Each client that said hello (initialize, server/discover) or called a tool: name, version, era, last seen. */
function renderClients() {
  const seen = new Map();
  for (const e of S.activity) {
    if (e.kind === 'connected') seen.set(`${e.client}\n${e.name || ''}\n${e.version || ''}`, { ...e });
    else if (e.kind === 'call') {
      const same = [...seen.values()].filter((c) => c.client === e.client);
      for (const c of same) c.time = e.time;
      if (!same.length) seen.set(e.client, { client: e.client, time: e.time });
    }
  }
  const items = [...seen.values()].sort((a, b) => b.time - a.time);
  $('client-list').replaceChildren(
    ...items.map((c) =>
      h(
        'li',
        { 'data-client': c.client },
        h('strong', {}, [c.name, c.version].filter(Boolean).join(' ') || 'a client that gave no name'),
        h(
          'span',
          { class: 'muted' },
          ` · ${c.client}${c.era ? ` · ${c.era}` : ''} · last seen ${time(c.time)}`,
        ),
      ),
    ),
  );
  $('clients-empty').hidden = items.length > 0;
}

function activityRow(e) {
  if (e.kind === 'connected')
    return h(
      'li',
      {},
      h('span', { class: 'when' }, time(e.time)),
      h(
        'span',
        {},
        h('strong', {}, 'connected'),
        h(
          'span',
          { class: 'muted' },
          ` · ${[e.name, e.version].filter(Boolean).join(' ') || 'no name'} · ${e.client} · ${e.era}`,
        ),
      ),
    );
  if (e.kind === 'refused')
    return h(
      'li',
      {},
      h('span', { class: 'when' }, time(e.time)),
      h(
        'span',
        { class: 'fail' },
        'credential refused · ',
        shown(e.client, 'line', SHOWN.name),
        ' · ',
        shown(e.what, 'line', SHOWN.line),
      ),
    );
  return h(
    'li',
    {},
    h('span', { class: 'when' }, time(e.time)),
    h(
      'span',
      {},
      h('strong', {}, shown(e.tool, 'line', SHOWN.name)),
      ' ',
      h('span', { class: e.ok ? 'okc' : 'fail' }, e.ok ? 'ok' : shown(e.error, 'line', SHOWN.line)),
      h('span', { class: 'muted' }, ' · ', shown(e.client, 'line', SHOWN.name), ` · ${Math.round(e.ms)} ms`),
      e.summary ? h('div', { class: 'mono' }, shown(e.summary, 'line', SHOWN.line)) : null,
    ),
  );
}

/* ---------- commands ---------- */
function renderCommands() {
  $('command-list').replaceChildren(...S.commands.map(commandCard));
  $('commands-empty').hidden = S.commands.length > 0;
}

function commandCard(c, inWorkspace) {
  const key = `command:${c.id}`;
  const msg = statusLine(key);
  const running = c.status === 'running';
  const outcome = running
    ? `running for ${Math.round(c.elapsed_ms / 1000)} s`
    : c.exit_code !== null
      ? `exited ${c.exit_code}`
      : `${c.status}${c.signal ? ` (${c.signal})` : ''}`;
  return h(
    'li',
    { 'data-command': c.id },
    h('strong', {}, c.id),
    ' ',
    h('span', { class: running ? 'okc' : c.exit_code === 0 ? 'muted' : 'fail' }, outcome),
    h(
      'span',
      { class: 'muted' },
      ' · in ',
      shown(c.workdir, 'line', SHOWN.line),
      c.sandboxed ? ' · sandboxed' : '',
    ),
    h('pre', { class: 'mono' }, shown(c.cmd, 'command', SHOWN.command)),
    c.tail
      ? h(
          'details',
          {},
          h('summary', {}, 'Output (last lines)'),
          h('pre', { class: 'mono' }, shown(c.tail, 'block', SHOWN.block)),
        )
      : null,
    running && !inWorkspace
      ? h(
          'div',
          { class: 'actions' },
          h(
            'button',
            {
              class: 'danger',
              type: 'button',
              'aria-label': `Kill command ${c.id}`,
              onclick: async () => {
                try {
                  await post(`/api/commands/${encodeURIComponent(c.id)}/kill`);
                  answer(key, 'Stopped.');
                } catch (e) {
                  answer(key, e.message, true);
                }
              },
            },
            'Kill',
          ),
        )
      : null,
    msg,
  );
}

/* ---------- edits, grouped by review point ---------- */
/* Each review point show_changes made (newest first) holds the edits made after the point before it and up to
   it; edits after the newest point are "Not reviewed yet". Without points the edits are one list. */
function renderEdits() {
  const edits = [...S.edits].reverse();
  const points = [...S.points].sort((a, b) => b.time - a.time);
  $('edits-empty').hidden = edits.length + points.length > 0;
  if (points.length === 0) return $('edit-list').replaceChildren(...edits.map(editCard));
  const groups = [];
  const newest = points[0].time;
  const fresh = edits.filter((e) => e.time > newest);
  if (fresh.length) groups.push(editGroup('Not reviewed yet', fresh));
  points.forEach((p, i) => {
    const older = points[i + 1] ? points[i + 1].time : -Infinity;
    groups.push(
      pointGroup(
        p,
        edits.filter((e) => e.time <= p.time && e.time > older),
      ),
    );
  });
  $('edit-list').replaceChildren(...groups);
}

function editGroup(title, edits) {
  return h(
    'li',
    { class: 'group', 'data-group': 'unreviewed' },
    h('h3', {}, title),
    h('ul', { class: 'cards' }, edits.map(editCard)),
  );
}

const STATUS = { added: 'A', modified: 'M', deleted: 'D', renamed: 'R' };

function pointFile(f) {
  const counts = f.added === null ? ' (binary)' : ` +${f.added} -${f.removed}`;
  const name = f.from
    ? [shown(f.from, 'line', SHOWN.line), ' → ', shown(f.path, 'line', SHOWN.line)]
    : [shown(f.path, 'line', SHOWN.line)];
  return h('li', { class: 'mono' }, `${STATUS[f.status] || '?'} `, name, counts);
}

function pointGroup(p, edits) {
  const key = `point:${p.id}`;
  const msg = statusLine(key);
  const tell = (text, bad) => answer(key, text, bad);
  const diff = h('details', {}, h('summary', {}, `Diff of ${p.id}`));
  diff.addEventListener('toggle', async () => {
    if (!diff.open || diff.dataset.loaded) return;
    diff.dataset.loaded = 'yes';
    try {
      const r = await fetch(`/api/points/${encodeURIComponent(p.id)}/diff`);
      const data = await r.json();
      if (!r.ok) throw new Error(data.message || `HTTP ${r.status}`);
      diff.append(diffBlock(data.diff || '(nothing changed)'));
    } catch (err) {
      diff.dataset.loaded = '';
      say(msg, err.message, true);
    }
  });
  const since = p.since ? ` since ${p.since}` : '';
  return h(
    'li',
    { class: 'group', 'data-point': p.id },
    h('h3', {}, `Review point ${p.id}`),
    h('p', { class: 'muted' }, `${time(p.time)} · ${p.files.length} file(s) changed${since}`),
    p.files.length ? h('ul', { class: 'files' }, p.files.map(pointFile)) : null,
    p.files.length ? diff : null,
    h(
      'div',
      { class: 'actions' },
      h(
        'button',
        {
          type: 'button',
          'aria-label': `Revert to review point ${p.id}`,
          onclick: async () => {
            try {
              await post(`/api/points/${encodeURIComponent(p.id)}/revert`);
              tell(`Reverted to ${p.id}.`);
            } catch (err) {
              tell(err.message, true);
            }
          },
        },
        'Revert to this review point',
      ),
    ),
    msg,
    edits.length ? h('ul', { class: 'cards' }, edits.map(editCard)) : null,
  );
}

function diffBlock(text) {
  const pre = h('pre', { class: 'mono diff' });
  for (const line of text.split('\n')) {
    const cls = line.startsWith('@@')
      ? 'hunk'
      : line.startsWith('+') && !line.startsWith('+++')
        ? 'add'
        : line.startsWith('-') && !line.startsWith('---')
          ? 'del'
          : undefined;
    const text = shown(line, 'block', SHOWN.block);
    pre.append(cls ? h('span', { class: cls }, text) : h('span', {}, text, '\n'));
  }
  return pre;
}

function editCard(e, inWorkspace) {
  const key = `edit:${e.id}`;
  const msg = statusLine(key);
  const files = e.files.flatMap((f, i) => [
    i ? ', ' : '',
    `${{ add: 'A', update: 'M', delete: 'D' }[f.op]} `,
    shown(f.path, 'line', SHOWN.line),
  ]);
  return h(
    'li',
    { 'data-edit': e.id },
    h('strong', {}, `${e.tool} ${e.id}`),
    h('span', { class: 'muted' }, ' · ', shown(e.client, 'line', SHOWN.name), ` · ${time(e.time)}`),
    h('div', { class: 'mono' }, files),
    h('details', { open: true }, h('summary', {}, 'Diff'), diffBlock(e.diff)),
    h(
      'div',
      { class: 'actions' },
      e.reverted_by
        ? h('span', { class: 'muted' }, `Reverted (${e.reverted_by}).`)
        : inWorkspace
          ? null
          : e.revertible
            ? h(
                'button',
                {
                  type: 'button',
                  'aria-label': `Revert edit ${e.id}`,
                  onclick: async () => {
                    try {
                      await post(`/api/edits/${encodeURIComponent(e.id)}/revert`);
                      answer(key, 'Reverted.');
                    } catch (err) {
                      answer(key, err.message, true);
                    }
                  },
                },
                'Revert',
              )
            : h('span', { class: 'muted' }, 'Too large to revert from here.'),
    ),
    msg,
  );
}

/* ---------- workspaces ---------- */
function renderWorkspaces() {
  const on = Array.isArray(S.workspaces);
  $('workspaces').hidden = !on;
  $('workspaces-nav').hidden = !on;
  if (!on) return;
  $('workspace-list').replaceChildren(...S.workspaces.map(workspaceCard));
  $('workspaces-empty').hidden = S.workspaces.length > 0;
}

function wsState(id) {
  if (!W.has(id)) W.set(id, { message: '', bad: false, diff: null, confirm: false });
  return W.get(id);
}

async function wsAction(w, action) {
  const st = wsState(w.id);
  try {
    if (action === 'diff') {
      const r = await fetch(`/api/workspaces/${encodeURIComponent(w.id)}/diff`);
      const data = await r.json();
      if (!r.ok) throw new Error(data.message || `HTTP ${r.status}`);
      st.diff = data;
    } else if (action === 'merge') {
      const r = await post(`/api/workspaces/${encodeURIComponent(w.id)}/merge`);
      const how = r.fast_forward ? 'fast-forward' : 'merge commit';
      Object.assign(st, {
        message: `Merged into ${w.source} (${how} ${r.commit.slice(0, 12)}).`,
        bad: false,
      });
    } else {
      const r = await post(`/api/workspaces/${encodeURIComponent(w.id)}/discard`, { confirm: w.id });
      say($('workspaces-message'), `Discarded workspace ${w.id}: ${r.removed} and its branch were removed.`);
      S.workspaces = S.workspaces.filter((x) => x.id !== w.id);
    }
  } catch (e) {
    Object.assign(st, { message: e.message, bad: true });
  }
  st.confirm = false;
  renderWorkspaces();
}

function worktreeTools(w, st) {
  const button = (label, cls, action, aria) =>
    h('button', { type: 'button', class: cls, 'aria-label': aria, onclick: action }, label);
  const confirm = st.confirm
    ? [
        h('span', {}, `Delete ${w.branch} and its directory?`),
        button(
          'Confirm discard',
          'danger',
          () => wsAction(w, 'discard'),
          `Confirm discard of workspace ${w.id}`,
        ),
        button('Cancel', undefined, () => ((st.confirm = false), renderWorkspaces())),
      ]
    : button(
        'Discard',
        'danger',
        () => ((st.confirm = true), renderWorkspaces()),
        `Discard workspace ${w.id}`,
      );
  return [
    h(
      'div',
      { class: 'actions' },
      button(
        st.diff ? 'Refresh diff' : 'Show diff',
        undefined,
        () => wsAction(w, 'diff'),
        `Diff of workspace ${w.id}`,
      ),
      button('Merge', 'primary', () => wsAction(w, 'merge'), `Merge workspace ${w.id}`),
      confirm,
    ),
    st.diff
      ? h(
          'details',
          { open: true, class: 'ws-diff' },
          h('summary', {}, `Diff against ${(w.base || '').slice(0, 12)}${st.diff.truncated ? ' (cut)' : ''}`),
          st.diff.diff ? diffBlock(st.diff.diff) : h('p', { class: 'muted' }, 'No change to tracked files.'),
          st.diff.untracked.length
            ? h(
                'p',
                {},
                'Untracked: ',
                st.diff.untracked.map((f, i) => [i ? ', ' : '', shown(f, 'line', SHOWN.line)]),
              )
            : null,
        )
      : null,
  ];
}

function workspaceCard(w) {
  const st = wsState(w.id);
  const sub = (title, items, make) =>
    items.length
      ? h(
          'details',
          { open: title === 'Approvals waiting' },
          h('summary', {}, `${title} (${items.length})`),
          h('ul', { class: 'cards' }, items.map(make)),
        )
      : null;
  return h(
    'li',
    { 'data-workspace': w.id },
    h('h3', {}, `Workspace ${w.id}`, h('span', { class: 'muted' }, ` · ${w.mode}`)),
    h(
      'dl',
      { class: 'pairs' },
      field('Path', h('span', { class: 'mono' }, shown(w.path, 'line', SHOWN.line))),
      w.branch
        ? [
            field(
              'Branch',
              h(
                'span',
                { class: 'mono' },
                shown(w.branch, 'line', SHOWN.name),
                ` from ${(w.base || '').slice(0, 12)}`,
              ),
            ),
            field('Merges into', h('span', { class: 'mono' }, shown(w.source, 'line', SHOWN.line))),
          ]
        : [],
    ),
    sub('Approvals waiting', w.approvals, approvalCard),
    sub('Commands', w.commands, (c) => commandCard(c, true)),
    sub('Edits', [...w.edits].reverse(), (e) => editCard(e, true)),
    w.mode === 'worktree' ? worktreeTools(w, st) : null,
    h('p', { class: `message ${st.message ? (st.bad ? 'fail' : 'okc') : ''}`, role: 'status' }, st.message),
  );
}

/* ---------- connection and safety ---------- */
/* `text` is the text to copy, or a function that makes it (a settings snippet with the token filled in). */
function copyButton(label, text) {
  return h(
    'button',
    {
      type: 'button',
      'aria-label': `Copy ${label}`,
      onclick: async (ev) => {
        try {
          await navigator.clipboard.writeText(typeof text === 'function' ? await text() : text);
          ev.target.textContent = 'Copied';
        } catch {
          ev.target.textContent = 'Select and copy';
        }
      },
    },
    'Copy',
  );
}

/* A URL that wraps only between its parts (after the scheme, after each dot of the host, before the path), never
 * inside one: `/mcp` stays whole on a phone. */
function urlView(u) {
  const m = /^([a-z]+:\/\/)([^/]*)(.*)$/.exec(u);
  const parts = m ? [m[1], ...m[2].split(/(?<=\.)/), m[3]].filter(Boolean) : [u];
  const kids = parts.flatMap((p, i) => (i ? [h('wbr', {}), h('span', {}, p)] : [h('span', {}, p)]));
  return h('span', { class: 'mono url', 'data-url': u }, ...kids);
}

function renderConnection() {
  const c = S.connection;
  if (!c) return;
  const reveal = h('div', {});
  const msg = h('p', { class: 'message', role: 'status' });
  const rows = h(
    'dl',
    { class: 'pairs' },
    h('dt', {}, 'On this machine'),
    h('dd', {}, urlView(c.local), ' ', copyButton('local URL', c.local)),
    h('dt', {}, 'From anywhere'),
    h('dd', {}, c.public ? [urlView(c.public), ' ', copyButton('public URL', c.public)] : c.tunnel),
    h('dt', {}, 'Sign-in'),
    h(
      'dd',
      {},
      {
        bearer: 'bearer token',
        oauth: 'OAuth (password or approval here)',
        noauth: 'none (this machine only)',
      }[c.auth],
    ),
  );
  const body = [
    rows,
    c.qr
      ? h('img', {
          class: 'qr',
          src: `data:image/svg+xml;base64,${btoa(c.qr)}`,
          alt: `QR code of ${c.public}`,
        })
      : h(
          'p',
          { class: 'muted', 'data-no-qr': '' },
          'No QR code: only this machine can reach this address. Published through a tunnel, the public URL gets one.',
        ),
  ];
  // The bearer token, asked for once when a Copy needs it (each reveal is an audit-log line).
  let token;
  const filled = (text) => async () => {
    token = token ?? (await post('/api/credential')).credential ?? '';
    return text.replaceAll('TOKEN', token);
  };
  if (c.revealable)
    body.push(
      h(
        'div',
        { class: 'actions' },
        h(
          'button',
          {
            type: 'button',
            onclick: async () => {
              try {
                const r = await post('/api/credential');
                const input = h('input', {
                  id: 'credential',
                  type: 'text',
                  readonly: true,
                  value: r.credential || '',
                  size: 48,
                  'aria-label': 'Bearer token',
                });
                reveal.replaceChildren(input, ' ', copyButton('bearer token', r.credential || ''));
              } catch (e) {
                say(msg, e.message, true);
              }
            },
          },
          'Reveal the bearer token',
        ),
        reveal,
      ),
      msg,
    );
  body.push(
    h('h3', {}, 'Client settings'),
    c.revealable
      ? h('p', { class: 'muted' }, 'Shown with TOKEN in place of the bearer token; Copy fills it in.')
      : false,
  );
  for (const s of c.clients)
    body.push(
      h(
        'p',
        {},
        h('strong', {}, s.client),
        ' ',
        copyButton(
          `${s.client} settings`,
          c.revealable && s.text.includes('TOKEN') ? filled(s.text) : s.text,
        ),
      ),
      h('pre', { class: 'mono' }, s.text),
    );
  $('connection-body').replaceChildren(...body);
}

function renderSafety() {
  const s = S.safety;
  if (!s) return;
  const blocks = S.network_blocks
    .slice(-10)
    .flatMap((b, i) => [
      i ? h('br') : '',
      `${time(b.time)} `,
      shown(b.host, 'line', SHOWN.line),
      ' (',
      shown(b.reason, 'line', SHOWN.line),
      ')',
    ]);
  const pairs = [
    ['Permission mode', s.permission_mode],
    ['Sandbox', s.sandbox],
    ['Network', s.network],
    ['Allowed hosts', s.allow.join(', ') || 'none'],
    ['Refused hosts', s.deny.join(', ') || 'none configured'],
    ['Recent network blocks', blocks.length ? blocks : 'none'],
    ...Object.entries(s.limits).map(([k, v]) => [k.replace(/_/g, ' '), String(v)]),
  ];
  $('safety-body').replaceChildren(...pairs.flatMap(([k, v]) => [h('dt', {}, k), h('dd', {}, v)]));
}

/* ---------- the stream ---------- */
function renderAll() {
  renderApprovals();
  renderActivity();
  renderWorkspaces();
  renderCommands();
  renderEdits();
  renderConnection();
  renderSafety();
}

function upsert(list, item) {
  const i = list.findIndex((x) => x.id === item.id);
  if (i >= 0) list[i] = item;
  else list.push(item);
}

function connect() {
  const live = $('live');
  const es = new EventSource('/api/events');
  es.addEventListener('open', () => {
    live.textContent = 'live';
    live.classList.add('on');
  });
  es.addEventListener('error', () => {
    live.textContent = 'reconnecting…';
    live.classList.remove('on');
  });
  es.addEventListener('state', (ev) => {
    Object.assign(S, JSON.parse(ev.data));
    document.body.dataset.ready = 'yes';
    renderAll();
  });
  es.addEventListener('activity', (ev) => {
    const batch = JSON.parse(ev.data);
    S.activity.push(...batch.entries);
    if (S.activity.length > 500) S.activity.splice(0, S.activity.length - 500);
    S.skipped += batch.skipped || 0;
    renderActivity();
  });
  es.addEventListener('approval', (ev) => {
    const a = JSON.parse(ev.data);
    S.approvals = S.approvals.filter((x) => x.id !== a.id);
    if (a.state === 'pending') S.approvals.push(a);
    renderApprovals();
  });
  es.addEventListener('edit', (ev) => {
    upsert(S.edits, JSON.parse(ev.data));
    renderEdits();
  });
  es.addEventListener('point', (ev) => {
    upsert(S.points, JSON.parse(ev.data));
    renderEdits();
  });
  es.addEventListener('workspaces', (ev) => {
    S.workspaces = JSON.parse(ev.data);
    renderWorkspaces();
  });
  es.addEventListener('commands', (ev) => {
    S.commands = JSON.parse(ev.data);
    renderCommands();
  });
}

$('activity-filter').addEventListener('input', renderActivity);
$('activity-errors').addEventListener('change', renderActivity);
connect();
