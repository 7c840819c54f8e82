// Loaded into the server by the soak (`node --expose-gc --import bench/soak-probe.mjs dist/cli/main.js …`), never
// by users: on SIGUSR2 it collects garbage and writes the process's memory figures to $WB_SOAK_PROBE_OUT, so the
// soak can compare the heap before and after without any hook in the server itself.
import { writeFileSync } from 'node:fs';

const out = process.env.WB_SOAK_PROBE_OUT;
if (out) {
  process.on('SIGUSR2', () => {
    globalThis.gc?.();
    const m = process.memoryUsage();
    writeFileSync(
      out,
      JSON.stringify({ at: Date.now(), rss: m.rss, heapUsed: m.heapUsed, external: m.external }),
    );
  });
}
