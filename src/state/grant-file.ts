// The OAuth grants file of a state directory (oauth/grants/grants.ts decides what goes in it: digests of refresh
// tokens of metadata-document and pre-registered clients, bounded and pruned). A file that cannot be read or
// written costs the grants a restart, never the start: the failure is logged once per kind.
import type { Logger } from '../core/log.js';
import { GRANTS_FILE } from './credentials.js';
import { readKept, writeKept, type KeptState } from './state-dir.js';

export function grantFile(
  state: KeptState,
  log: Logger,
): { load(): string | undefined; save(text: string): void } {
  let saveFailed = false;
  return {
    load() {
      try {
        return readKept(state, GRANTS_FILE);
      } catch (e) {
        log.warn(`OAuth grants of the last run are not used: ${String((e as Error)?.message ?? e)}`);
        return undefined;
      }
    },
    save(text) {
      try {
        writeKept(state, GRANTS_FILE, text, { replace: true });
        saveFailed = false;
      } catch (e) {
        if (!saveFailed)
          log.warn(`OAuth grants cannot be kept for the next start: ${String((e as Error)?.message ?? e)}`);
        saveFailed = true;
      }
    },
  };
}
