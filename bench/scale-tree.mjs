// The scale benchmark's tree (bench/scale-bench.mjs): a generated repository the size of the Linux kernel —
// 80,000 files in 4,000 directories, about 870 MB, committed to git — made from a seeded generator, so every
// run and every machine gets the same tree. It lives outside the repository (under os.tmpdir()), is made once
// and reused while its marker file says it is complete: making it writes 870 MB and hashes them into git.
// Exactly NEEDLE_LINES lines hold NEEDLE, so a search has a known answer.
// Usage: node bench/scale-tree.mjs [DIR]   (prints the directory; DIR defaults to scaleTreeDir())
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const SEED = 0x5eed2026;
export const FILES = 80_000;
export const DIRS = 4_000;
export const TARGET_BYTES = 870 * 1000 * 1000;
export const NEEDLE = 'scale_bench_needle';
export const NEEDLE_LINES = 81;
const VERSION = 1;

export function scaleTreeDir() {
  return path.join(tmpdir(), `workbench-scale-tree-v${VERSION}-${SEED.toString(16)}`);
}

/** mulberry32: a small seeded generator, the same numbers everywhere. */
function rng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const WORDS = (
  'arch block core crypto drivers fs include init ipc kernel lib mm net scripts security sound tools usr virt ' +
  'acpi ata base bluetooth bus char clk cpufreq dma edac firmware gpio gpu hid hwmon i2c iio infiniband input ' +
  'iommu irqchip leds mailbox md media misc mmc mtd nvme of pci phy pinctrl platform power pwm regulator remoteproc ' +
  'reset rtc scsi soc spi staging thermal tty usb vfio video watchdog xen ext4 btrfs xfs nfs fuse proc sysfs ' +
  'debug trace sched time locking rcu irq bpf events printk module cgroup audit netfilter ipv4 ipv6 sunrpc'
).split(' ');
const EXTS = ['c', 'c', 'c', 'h', 'h', 'S', 'txt', 'rst', 'yaml', 'sh', 'py', 'json'];
const IDENTS = (
  'struct device *dev; int ret = 0; unsigned long flags; spin_lock_irqsave(&lock, flags); return -EINVAL; ' +
  'static const struct file_operations fops = { .owner = THIS_MODULE }; if (!ptr) goto out_free; kfree(buf); ' +
  'mutex_lock(&priv->mutex); list_for_each_entry(pos, head, list) { count++; } pr_debug("%s: %d\\n", __func__, ret); ' +
  'EXPORT_SYMBOL_GPL(init_once); #include <linux/module.h> #define MAX_ENTRIES 256 u32 val = readl(base + REG_CTRL);'
).split(' ');

/** A pool of text lines that files are cut from (so 870 MB are made quickly, and compress in git). */
function linePool(rand) {
  const lines = [];
  for (let i = 0; i < 4096; i++) {
    const n = 2 + Math.floor(rand() * 10);
    const indent = '\t'.repeat(Math.floor(rand() * 3));
    const words = [];
    for (let k = 0; k < n; k++) words.push(IDENTS[Math.floor(rand() * IDENTS.length)]);
    lines.push(indent + words.join(' ') + ` /* ${i.toString(36)} */`);
  }
  return lines;
}

/** Directory paths: a random tree, shallow-biased, at most 8 levels (the kernel's shape). */
function directories(rand) {
  const dirs = [{ rel: '', depth: 0, names: new Set() }];
  while (dirs.length < DIRS + 1) {
    // Parents drawn with a bias towards earlier (shallower) directories.
    const parent = dirs[Math.floor(Math.pow(rand(), 1.6) * dirs.length)];
    if (parent.depth >= 8) continue;
    let name = WORDS[Math.floor(rand() * WORDS.length)];
    if (parent.names.has(name)) name = `${name}${Math.floor(rand() * 1000)}`;
    if (parent.names.has(name)) continue;
    parent.names.add(name);
    dirs.push({
      rel: parent.rel ? `${parent.rel}/${name}` : name,
      depth: parent.depth + 1,
      names: new Set(),
    });
  }
  return dirs.slice(1);
}

/** Makes the tree in `dir` (removing anything half-made there first); returns its summary. */
export function makeScaleTree(dir = scaleTreeDir()) {
  const marker = `${dir}.complete.json`;
  if (existsSync(marker) && existsSync(dir)) return JSON.parse(readFileSync(marker, 'utf8'));
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const rand = rng(SEED);
  const pool = linePool(rand);
  const dirs = directories(rand);
  for (const d of dirs) mkdirSync(path.join(dir, d.rel), { recursive: true });
  const meanBytes = TARGET_BYTES / FILES;
  const needleAt = new Set();
  while (needleAt.size < NEEDLE_LINES) needleAt.add(Math.floor(rand() * FILES));
  let bytes = 0;
  for (let i = 0; i < FILES; i++) {
    const d = dirs[Math.floor(rand() * dirs.length)];
    const name = `${WORDS[Math.floor(rand() * WORDS.length)]}_${i.toString(36)}.${EXTS[Math.floor(rand() * EXTS.length)]}`;
    // Sizes spread around the mean (exponential), so a few files are large as in a real tree.
    const want = Math.max(64, Math.round(-Math.log(1 - rand()) * meanBytes));
    const out = [];
    let n = 0;
    let k = Math.floor(rand() * pool.length);
    while (n < want) {
      const line = pool[k++ % pool.length];
      out.push(line);
      n += line.length + 1;
    }
    if (needleAt.has(i)) out[Math.floor(out.length / 2)] += ` ${NEEDLE}`;
    const text = out.join('\n') + '\n';
    bytes += Buffer.byteLength(text);
    writeFileSync(path.join(dir, d.rel, name), text);
  }
  const git = (...a) => {
    const r = spawnSync('git', a, {
      cwd: dir,
      stdio: ['ignore', 'ignore', 'inherit'],
      env: {
        ...process.env,
        GIT_AUTHOR_NAME: 'bench',
        GIT_AUTHOR_EMAIL: 'bench@localhost',
        GIT_COMMITTER_NAME: 'bench',
        GIT_COMMITTER_EMAIL: 'bench@localhost',
        GIT_AUTHOR_DATE: '2026-01-01T00:00:00Z',
        GIT_COMMITTER_DATE: '2026-01-01T00:00:00Z',
      },
    });
    if (r.status !== 0) throw new Error(`git ${a.join(' ')} failed`);
  };
  git('init', '-q', '-b', 'main');
  git('add', '-A');
  git('commit', '-q', '-m', 'scale benchmark tree');
  const summary = {
    seed: SEED,
    files: FILES,
    directories: DIRS,
    bytes,
    needle: NEEDLE,
    needle_lines: NEEDLE_LINES,
  };
  writeFileSync(marker, JSON.stringify(summary) + '\n');
  return summary;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const dir = process.argv[2] ?? scaleTreeDir();
  const t0 = Date.now();
  const s = makeScaleTree(dir);
  process.stdout.write(`${dir}\n${JSON.stringify(s)} (${Math.round((Date.now() - t0) / 1000)} s)\n`);
}
