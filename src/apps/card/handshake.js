// What the card's two scripts agree on about the App's handshake with its host (docs/review-card.md#the-start):
// early.js asks the host `ui/initialize` with these params before the bridge's script is even compiled, and
// early-transport.js hands the answer to the App only when the App asks with the same params.

/** The card as the App names itself to the host. */
export const APP_INFO = { name: 'workbench-changes', version: '1' };

/**
 * The params of the App's own `ui/initialize` for the card (`new App(APP_INFO, {})`): its capabilities, its
 * name and the extension's protocol version the bridge speaks (ext-apps' LATEST_PROTOCOL_VERSION). If the bridge
 * changes them, the transport sees the difference and the App makes its own handshake (test/apps/ holds them equal).
 */
export const INIT_PARAMS = { appCapabilities: {}, appInfo: APP_INFO, protocolVersion: '2026-01-26' };

/** The early request's JSON-RPC id: a string, so no id of the App's own requests (numbers) can meet it. */
export const EARLY_ID = 'workbench-card-early-initialize';

/** Where early.js leaves its state for the bundle (a property of the card's own window). */
export const EARLY_KEY = '__workbenchCardEarly';
