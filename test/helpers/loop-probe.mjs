// Test-only: loaded into the server with `node --import test/helpers/loop-probe.mjs dist/cli/main.js …`
// (test/helpers/probed-server.ts does it), never by users. It watches the process from inside without any
// hook in the server: how long the event loop was held by work — a 10 ms timer's lateness, counted only as far
// as the loop's own thread ran on a CPU meanwhile (its utime + stime in /proc/thread-self/stat; where that is
// missing, the whole process's CPU time): on a machine busy with other work a starved process is late without
// being blocked, and a test must not fail by the machine's load, nor by GC or I/O threads working beside the
// loop. The wall-clock maximum of perf_hooks.monitorEventLoopDelay is reported beside it as maxWallDelayMs. Also
// peak RSS (the kernel's high-water mark, VmHWM, so a peak inside one synchronous stretch is not missed) and the
// number of open descriptors (sampled every 20 ms). On SIGUSR2 it writes the maxima since the previous report to
// $WB_LOOP_PROBE_OUT as JSON `{seq, maxDelayMs, maxWallDelayMs, maxRssBytes, maxFds}` (written to a temporary
// file and renamed, so a reader never sees half of it), then starts the next measurement from now.
import { readdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { monitorEventLoopDelay } from 'node:perf_hooks';

const out = process.env.WB_LOOP_PROBE_OUT;
const FD_SAMPLE_MS = 20;
const TICK_MS = 10;

function openFds() {
  try {
    return readdirSync('/proc/self/fd').length;
  } catch {
    return 0; // no /proc (not Linux): not measured
  }
}

/** Peak resident set size in bytes since start or the last reset. */
function peakRss() {
  try {
    const m = /^VmHWM:\s+(\d+) kB/m.exec(readFileSync('/proc/self/status', 'utf8'));
    if (m) return Math.max(Number(m[1]) * 1024, process.memoryUsage.rss());
  } catch {
    // not Linux
  }
  return Math.max(process.resourceUsage().maxRSS * 1024, process.memoryUsage.rss());
}

/** Lets VmHWM start again from the current RSS (Linux: "5" to clear_refs resets the peak). */
function resetPeakRss() {
  try {
    writeFileSync('/proc/self/clear_refs', '5');
  } catch {
    // not Linux, or not allowed: the peak then counts from the start
  }
}

/** Milliseconds of CPU the kernel's scheduler tick accounts (USER_HZ: 100 on every Linux ABI). */
const TICK_CPU_MS = 10;

/** CPU time, in ms, of the calling thread (the event loop's: timers run on it); the process's without /proc. */
function loopThreadCpuMs() {
  try {
    const stat = readFileSync('/proc/thread-self/stat', 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // Fields 14 and 15 of stat(5) (utime, stime), counted from the state field (3) after the command name.
    return (Number(f[11]) + Number(f[12])) * TICK_CPU_MS;
  } catch {
    const c = process.cpuUsage();
    return (c.user + c.system) / 1000;
  }
}

if (out) {
  const delay = monitorEventLoopDelay({ resolution: 10 });
  delay.enable();
  let maxFds = openFds();
  let maxRss = 0;
  const timer = setInterval(() => {
    maxFds = Math.max(maxFds, openFds());
    maxRss = Math.max(maxRss, process.memoryUsage.rss());
  }, FD_SAMPLE_MS);
  timer.unref();
  // Lateness of a 10 ms tick, bounded by the CPU the loop's thread used in that time (plus one scheduler tick
  // of rounding): work that held the loop.
  let maxHeld = 0;
  let last = performance.now();
  let lastCpu = loopThreadCpuMs();
  const measure = () => {
    const now = performance.now();
    const cpu = loopThreadCpuMs();
    const late = now - last - TICK_MS;
    if (late > 0) maxHeld = Math.max(maxHeld, Math.min(late, cpu - lastCpu + TICK_CPU_MS));
    last = now;
    lastCpu = cpu;
  };
  const tick = setInterval(measure, TICK_MS);
  tick.unref();
  // The probe's own check: SIGUSR1 holds the loop for 300 ms of CPU, which a sample must then report.
  process.on('SIGUSR1', () => {
    const start = loopThreadCpuMs();
    while (loopThreadCpuMs() - start < 300);
  });
  let seq = 0;
  process.on('SIGUSR2', () => {
    measure(); // a stall since the last tick counts in this report
    seq++;
    const report = {
      seq,
      maxDelayMs: maxHeld,
      maxWallDelayMs: delay.max / 1e6,
      maxRssBytes: Math.max(maxRss, peakRss()),
      maxFds: Math.max(maxFds, openFds()),
    };
    writeFileSync(`${out}.tmp`, JSON.stringify(report));
    renameSync(`${out}.tmp`, out);
    delay.reset();
    maxHeld = 0;
    resetPeakRss();
    maxRss = 0;
    maxFds = openFds();
  });
}
