// Debian's Chromium for the browser tests (driven by playwright-core from node_modules/.cache): where it is and
// the flags every test launches it with. Without the background-networking flags Chromium keeps trying to reach
// the internet.
export const CHROMIUM = process.env.WB_CHROMIUM ?? '/usr/bin/chromium';
export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
];
