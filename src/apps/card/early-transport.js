// The App's transport after early.js began the handshake (docs/review-card.md#the-start): the extension's own
// PostMessageTransport to `window.parent`, whose listener (the source check and the JSON-RPC schema) every
// message from the host still goes through, first taking over what early.js held. The App's `ui/initialize` is
// answered with the host's answer to the early request, its id made the App's, when the App asks with the same
// params; the messages the host sent after it wait until the App sends its `initialized` (not sent twice), as a
// host sends them only after that, and then follow in the order they came, so the App reads them as it always
// did, each through the bridge's own checks. Without a successful early answer (none yet, an error, other
// params) the App's handshake goes to the host as always, and an early answer that comes after it is dropped.
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
    /** The host's messages not yet handed to the App, in order, while the handshake is answered early. */
    this.gate = undefined;
    this.answer = undefined;
    this.skipInitialized = false;
    this.check = this.messageListener;
    this.messageListener = (e) => {
      if (isEarlyAnswer(e.data)) return; // nobody waits for it (the App made its own handshake)
      if (this.gate) this.gate.push(e);
      else this.check(e);
    };
  }

  async start() {
    const taken = this.early?.take();
    this.gate = taken?.held ?? [];
    this.answer = taken?.answer;
    if (!this.answer) this.release();
    return super.start();
  }

  /**
   * The held messages to the transport's own listener, in order: up to the early answer, handed as the answer
   * to the App's request `id`, when `id` is given (the rest wait for the App's `initialized`); all of them, the
   * early answer left out, when not.
   */
  release(id) {
    const gate = this.gate ?? [];
    while (gate.length > 0) {
      const e = gate.shift();
      if (e !== this.answer) this.check(e);
      else if (id !== undefined) {
        this.answer = undefined;
        const data = { ...e.data, id };
        return this.check(new window.MessageEvent('message', { data, source: e.source }));
      }
    }
    this.gate = undefined;
    this.answer = undefined;
  }

  async send(message, options) {
    if (this.answer) {
      this.skipInitialized = message.method === INITIALIZE && sameParams(message.params);
      if (this.skipInitialized) {
        // After send returns: the App's request is registered before its answer comes.
        queueMicrotask(() => this.release(message.id));
        return;
      }
      this.release();
    }
    if (message.method === INITIALIZED && this.skipInitialized) {
      this.skipInitialized = false;
      this.release();
      return;
    }
    return super.send(message, options);
  }
}
