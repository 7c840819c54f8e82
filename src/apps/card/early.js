// The card's first script, a few hundred bytes run before the bridge's 168 KB are parsed (docs/review-card.md#the-start):
// it asks the host `ui/initialize` at once, with the params the App would send, and on a successful answer tells
// the host `ui/notifications/initialized`, so the host sends the tool's input and result while the big script
// still compiles and builds its schemas. It reads nothing of what it receives but the answer's id and whether it
// is a result: every message from the host is kept as it came (the MessageEvent) and handed to the App's
// transport (early-transport.js), which passes it through the bridge's own checks, the answer included.
import { EARLY_ID, EARLY_KEY, INIT_PARAMS } from './handshake.js';

const parent = window.parent;
if (parent !== window) {
  /** Messages from the parent, in order, until the App's transport takes them. */
  const held = [];
  let answer;
  let state = 'asked';
  let onSettled;
  const listen = (e) => {
    if (e.source !== parent) return;
    const m = e.data;
    if (state === 'asked' && m?.jsonrpc === '2.0' && m.id === EARLY_ID && !('method' in m)) {
      state = 'result' in m ? 'answered' : 'refused';
      if (state === 'answered') {
        answer = e;
        held.push(e);
        parent.postMessage({ jsonrpc: '2.0', method: 'ui/notifications/initialized' }, '*');
      }
      onSettled?.();
      return;
    }
    held.push(e);
  };
  window.addEventListener('message', listen);
  /**
   * `fn` run in a later task, after the tasks queued before the last call of the function returned: a message
   * posted on a MessageChannel is queued as the parent's messages and this page's own cross-process posts are
   * (Chromium holds each `postMessage` to another process until the task that made it ends).
   */
  const turn = (fn) => {
    const ch = new window.MessageChannel();
    let n = 0;
    ch.port1.onmessage = (e) => {
      if (e.data !== n) return;
      ch.port1.close();
      fn();
    };
    return () => ch.port2.postMessage(++n);
  };
  parent.postMessage({ jsonrpc: '2.0', id: EARLY_ID, method: 'ui/initialize', params: INIT_PARAMS }, '*');
  window[EARLY_KEY] = {
    /** Runs `fn` in a task of its own, after the tasks already queued (see ready). */
    later: (fn) => turn(fn)(),
    /**
     * Runs `start` (the App's connect) in a task of its own, after the parent's messages already queued: the
     * answer, if it came while the bundle was built, is read first, and the `initialized` it prompts is on its way
     * before the App's own work begins. Nothing here waits for the host: without an answer yet the App makes its
     * own handshake.
     */
    ready(start) {
      const again = turn(start);
      onSettled = again;
      again();
    },
    /** Ends the early listener: every message held, in order, the successful answer among them (if it came). */
    take() {
      window.removeEventListener('message', listen);
      const out = { answer: state === 'answered' ? answer : undefined, held: held.splice(0) };
      state = 'taken';
      return out;
    },
  };
}
