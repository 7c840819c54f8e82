/* global document, window */
// The host page of the card's browser test (test/apps/card-browser.test.ts), as an MCP Apps host builds it: the
// card's HTML in a sandboxed iframe (scripts only, an opaque origin), joined to the host by the official host
// bridge (AppBridge + PostMessageTransport of @modelcontextprotocol/ext-apps). The card's calls to the server go
// to `window.hostCallTool`, which the test wires to a real MCP client; each is kept in `window.cardCalls`.
// `window.hostSeen` lists what the card sent the host (each message's method, `response` for an answer).
import { AppBridge, PostMessageTransport } from '@modelcontextprotocol/ext-apps/app-bridge';

window.cardCalls = [];
window.hostSeen = [];
let bridge;

/**
 * The host's transport: the extension's own, noting what the card sends. `early` (test/apps/card-early.test.ts)
 * says how the host treats the card's first `ui/initialize`: 'answer' it as any host does, 'drop' it (a host that
 * missed it), 'refuse' it (a JSON-RPC error), or answer it 'late', after the App's own.
 */
class HostTransport extends PostMessageTransport {
  constructor(win, early = 'answer') {
    super(win, win);
    const pass = this.messageListener;
    let first;
    this.messageListener = (e) => {
      if (e.source !== win) return pass(e);
      const m = e.data;
      // A request's id as well: the card's early `ui/initialize` has a string id, the App's requests numbers.
      window.hostSeen.push(m?.method ?? 'response', ...(m?.method && 'id' in m ? [typeof m.id] : []));
      if (m?.method !== 'ui/initialize' || early === 'answer') return pass(e);
      if (first) {
        pass(e);
        if (early === 'late') pass(first);
        return;
      }
      first = e;
      const error = { code: -32603, message: 'The host is not ready' };
      if (early === 'refuse') win.postMessage({ jsonrpc: '2.0', id: m.id, error }, '*');
    };
  }
}

/**
 * Shows `html` with the tool result `result`; resolves once the card has received it. `early`: see HostTransport;
 * `raw`: the result is posted as it is, unchecked by the host's bridge (a host that sends a malformed one);
 * `change`: a host context change sent just after the result.
 */
window.showCard = async (html, result, theme = 'light', { early, raw, change } = {}) => {
  document.querySelector('iframe')?.remove();
  const iframe = document.createElement('iframe');
  iframe.setAttribute('sandbox', 'allow-scripts');
  iframe.title = 'Review card';
  document.body.append(iframe);
  bridge = new AppBridge(
    null,
    { name: 'card-test-host', version: '1' },
    { serverTools: {} },
    { hostContext: { theme, displayMode: 'inline', styles: { variables: {} } } },
  );
  bridge.oncalltool = async (params) => {
    window.cardCalls.push(params);
    return window.hostCallTool(params);
  };
  bridge.onsizechange = ({ height }) => {
    if (height) iframe.style.height = `${height}px`;
  };
  const initialized = new Promise((resolve) => (bridge.oninitialized = resolve));
  window.hostSeen = [];
  await bridge.connect(new HostTransport(iframe.contentWindow, early));
  iframe.srcdoc = html;
  await initialized;
  const method = 'ui/notifications/tool-result';
  if (raw) iframe.contentWindow.postMessage({ jsonrpc: '2.0', method, params: result }, '*');
  else await bridge.sendToolResult(result);
  if (change) await bridge.sendHostContextChange(change);
};

/** The host sends a tool result to the card shown. */
window.sendToolResult = (result) => bridge.sendToolResult(result);

/** The host switches theme, as a person does in the chat. */
window.setTheme = (theme) => bridge.sendHostContextChange({ theme });
