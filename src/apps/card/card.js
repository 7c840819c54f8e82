// The review card (docs/review-card.md): an MCP App on the official bridge (@modelcontextprotocol/ext-apps). The
// host hands it a tool result; it draws the patch the result carries for the host (render.js), loads the rest of
// a cut diff and reverts to a review point by calling the server through the host. No network of its own.
import { App, applyDocumentTheme, applyHostStyleVariables } from '@modelcontextprotocol/ext-apps';
import { config } from 'zod/v4/core';
import { EarlyTransport } from './early-transport.js';
import { APP_INFO, EARLY_KEY } from './handshake.js';
import { el, renderCard } from './render.js';

/** Must match src/tools/apps.ts DIFF_META_KEY. */
const DIFF_META_KEY = 'io.github.workbench-mcp/diff';

// The strict CSP forbids eval: zod's compiled parsers are off, so it does not try.
config({ jitless: true });

const root = document.getElementById('card');
const app = new App(APP_INFO, {}, { autoResize: true });
let data;

app.ontoolresult = (result) => show(result);
app.onhostcontextchanged = (ctx) => theme(ctx);
// The handshake first: the host sends the tool result only once it is done (the functions below are hoisted).
// early.js began it before this script was parsed; its transport finishes it (early-transport.js).
const early = window[EARLY_KEY];
if (early) early.ready(connect);
else connect();

function connect() {
  app
    .connect(new EarlyTransport(early))
    .then(() => theme(app.getHostContext()))
    .catch((e) => root.replaceChildren(el('p', { class: 'empty' }, `No host: ${e?.message ?? e}`)));
}

function theme(ctx) {
  if (ctx?.theme) applyDocumentTheme(ctx.theme);
  if (ctx?.styles?.variables) applyHostStyleVariables(ctx.styles.variables);
}

function show(result) {
  const d = result?._meta?.[DIFF_META_KEY];
  if (!d) {
    const text = result?.content?.find((c) => c.type === 'text')?.text ?? 'No change to show.';
    root.replaceChildren(el('p', { class: 'empty' }, text));
    return;
  }
  data = d;
  draw();
}

function draw() {
  renderCard(root, data, data.cut?.next ? loadRest : undefined);
  if (data.point && data.since) root.append(revertBox(data.since));
}

/** `cut.next` through the host: the files it returns replace the cut ones and join the list. */
async function loadRest() {
  const next = data.cut.next;
  status('Loading the rest…');
  try {
    const r = await app.callServerTool({ name: next.name, arguments: next.arguments });
    const more = r?._meta?.[DIFF_META_KEY];
    if (r?.isError || !more) return status(errorText(r, 'The rest could not be loaded.'));
    const fresh = new Map(more.files.map((f) => [f.path, f]));
    const files = data.files.map((f) => fresh.get(f.path) ?? f);
    for (const f of more.files) if (!data.files.some((g) => g.path === f.path)) files.push(f);
    data = { ...data, files, cut: more.cut };
    draw();
  } catch (e) {
    status(`The rest could not be loaded: ${e?.message ?? e}`);
  }
}

/** "Revert to this review point", with a confirm step before anything is called. */
function revertBox(point) {
  const box = el('div', { class: 'actions' });
  const ask = el('button', { class: 'btn', type: 'button' }, `Revert to review point ${point}`);
  ask.addEventListener('click', () => {
    const yes = el('button', { class: 'btn danger', type: 'button' }, 'Revert the files');
    const no = el('button', { class: 'btn', type: 'button' }, 'Cancel');
    yes.addEventListener('click', () => revert(point, box));
    no.addEventListener('click', () => {
      box.replaceWith(revertBox(point));
    });
    box.replaceChildren(
      el(
        'span',
        {},
        `Put every file back as it was at review point ${point}? Changes since then are undone.`,
      ),
      yes,
      no,
    );
    yes.focus();
  });
  box.append(ask, el('span', { class: 'status', role: 'status' }));
  return box;
}

async function revert(point, box) {
  box.replaceChildren(el('span', { class: 'status', role: 'status' }, 'Reverting…'));
  try {
    // In the workspace the diff came from (its id is in the data when the call named one).
    const where = data.workspace ? { workspace: data.workspace } : {};
    const r = await app.callServerTool({ name: 'revert_changes', arguments: { point, ...where } });
    status(r?.isError ? errorText(r, 'The revert failed.') : `Reverted to review point ${point}.`);
  } catch (e) {
    status(`The revert failed: ${e?.message ?? e}`);
  }
}

function errorText(r, fallback) {
  return r?.content?.find((c) => c.type === 'text')?.text?.split('\n')[0] ?? fallback;
}

function status(text) {
  let s = root.querySelector('.status');
  if (!s) root.append((s = el('p', { class: 'status', role: 'status' })));
  s.textContent = text;
}
