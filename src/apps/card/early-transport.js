// The App's transport after early.js began the handshake (docs/review-card.md#the-start): the extension's own
// PostMessageTransport to `window.parent`, whose listener (the source check and the JSON-RPC schema) every
// message from the host still goes through, first taking over what early.js held. The App's `ui/initialize` is
// answered with the host's answer to the early request, its id made the App's, when the App asks with the same
// params, and the App's `initialized` is not sent twice; the messages the host sent meanwhile follow in the order
// they came, so the bridge checks each of them (the tool result included) as it checks any message. Without a
// successful early answer (none yet, an error, other params) the App's handshake goes to the host as always,
// and an early answer that comes after it is dropped (nobody waits for it).
import { PostMessageTransport } from '@modelcontextprotocol/ext-apps';
import { EARLY_ID, INIT_PARAMS } from './handshake.js';

const INITIALIZE = 'ui/initialize';
const INITIALIZED = 'ui/notifications/initialized';

/** The App's params are the early request's (plain JSON values, built in the same order). */
const sameParams = (params) => JSON.stringify(params) === JSON.stringify(INIT_PARAMS);

const isEarlyAnswer = (data) => data?.id === EARLY_ID && !('method' in data);

export class EarlyTransport extends PostMessageTransport {
  /** `early`: what early.js left (`window[EARLY_KEY]`), or nothing for a plain PostMessageTransport. */
  constructor(early) {
    super(window.parent, window.parent);
    this.early = early;
    this.held = [];
    this.answer = undefined;
    this.listening = false;
    this.skipInitialized = false;
    const check = this.messageListener;
    this.messageListener = (e) => (isEarlyAnswer(e.data) ? undefined : check(e));
  }

  async start() {
    const taken = this.early?.take();
    this.held = taken?.held ?? [];
    this.answer = taken?.answer;
    if (!this.answer) this.listen();
  }

  /**
   * The held messages, in order, through the transport's own listener (the early answer as the answer to the
   * App's request `id`, when given), then the window's messages.
   */
  listen(id) {
    const answer = this.answer;
    this.answer = undefined;
    for (const e of this.held.splice(0)) {
      if (e !== answer) this.messageListener(e);
      else if (id !== undefined)
        this.messageListener(
          new window.MessageEvent('message', { data: { ...e.data, id }, source: e.source }),
        );
    }
    if (this.listening) return;
    this.listening = true;
    return super.start();
  }

  async send(message, options) {
    if (this.answer) {
      this.skipInitialized = message.method === INITIALIZE && sameParams(message.params);
      if (this.skipInitialized) {
        // After send returns: the App's request is registered before its answer comes.
        queueMicrotask(() => this.listen(message.id));
        return;
      }
      this.listen();
    }
    if (message.method === INITIALIZED && this.skipInitialized) {
      this.skipInitialized = false;
      return;
    }
    return super.send(message, options);
  }
}
