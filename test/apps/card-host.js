/* global document, window */
// The host page of the card's browser test (test/apps/card-browser.test.ts), as an MCP Apps host builds it: the
// card's HTML in a sandboxed iframe (scripts only, an opaque origin), joined to the host by the official host
// bridge (AppBridge + PostMessageTransport of @modelcontextprotocol/ext-apps). The card's calls to the server go
// to `window.hostCallTool`, which the test wires to a real MCP client; each is kept in `window.cardCalls`.
import { AppBridge, PostMessageTransport } from '@modelcontextprotocol/ext-apps/app-bridge';

window.cardCalls = [];
let bridge;

/** Shows `html` with the tool result `result`; resolves once the card has received it. */
window.showCard = async (html, result, theme = 'light') => {
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
  await bridge.connect(new PostMessageTransport(iframe.contentWindow, iframe.contentWindow));
  iframe.srcdoc = html;
  await initialized;
  await bridge.sendToolResult(result);
};

/** The host switches theme, as a person does in the chat. */
window.setTheme = (theme) => bridge.sendHostContextChange({ theme });
