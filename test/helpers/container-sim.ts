// The container simulation for the Landlock sandbox's tests (docs/security-model.md#the-landlock-sandbox):
// test/fixtures/container-seccomp.c, compiled into node_modules/.cache when missing or older, runs the server
// under a seccomp filter like a container runtime's default profile (no namespaces may be made), where
// bubblewrap cannot start and the server falls back to the Landlock helper. Needs a C compiler, the built
// helper (dist/native/wb-landlock) and a kernel with Landlock: skipped with the reason when one is absent, a
// failure under CI=true (CI installs the compiler; its kernels have Landlock, as this machine's does).
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, renameSync, rmSync, statSync } from 'node:fs';
import path from 'node:path';
import { REPO_ROOT } from './server.js';

export const LANDLOCK_HELPER = path.join(REPO_ROOT, 'dist/native/wb-landlock');
const SOURCE = path.join(REPO_ROOT, 'test/fixtures/container-seccomp.c');

let built: { launcher: string } | { why: string } | undefined;

function build(): { launcher: string } | { why: string } {
  if (process.platform !== 'linux' || !['x64', 'arm64'].includes(process.arch))
    return {
      why: `the container simulation is for Linux on x64 and arm64, not ${process.platform}/${process.arch}`,
    };
  const cc = ['cc', 'gcc', 'clang'].find((c) => !spawnSync(c, ['--version']).error);
  if (!cc) return { why: 'no C compiler (cc, gcc or clang) to build test/fixtures/container-seccomp.c' };
  if (!existsSync(LANDLOCK_HELPER))
    return { why: 'dist/native/wb-landlock is not built (no C compiler when npm run build ran)' };
  const abi = spawnSync(LANDLOCK_HELPER, ['--abi'], { encoding: 'utf8' });
  const n = Number(abi.stdout?.trim());
  if (abi.status !== 0 || !(n >= 1))
    return {
      why: `the kernel offers no Landlock (wb-landlock --abi: ${abi.stdout?.trim() || abi.stderr?.trim()})`,
    };
  // Without signal scoping a `kill -KILL -1` of the attack suites, from a root server, would reach the
  // whole machine.
  if (n < 6)
    return {
      why: `the kernel's Landlock ABI ${n} < 6 cannot confine signals; the attacks would reach the host`,
    };
  // Built once into the repository's cache (not a shared temp directory: a root test runs it), atomically.
  const dir = path.join(REPO_ROOT, 'node_modules/.cache/wb-container-sim');
  const launcher = path.join(dir, 'container-seccomp');
  if (existsSync(launcher) && statSync(launcher).mtimeMs >= statSync(SOURCE).mtimeMs) return { launcher };
  mkdirSync(dir, { recursive: true, mode: 0o755 });
  chmodSync(dir, 0o755); // the unprivileged server runs it too
  const tmp = `${launcher}.${process.pid}.tmp`;
  const r = spawnSync(cc, ['-O2', '-Wall', '-o', tmp, SOURCE], { encoding: 'utf8' });
  if (r.status !== 0) {
    rmSync(tmp, { force: true });
    return { why: `${cc} could not build the container launcher: ${r.stderr.trim()}` };
  }
  renameSync(tmp, launcher);
  return { launcher };
}

/** The launcher's path, or undefined after printing why not (throws under CI=true). */
export function containerLauncher(what: string): string | undefined {
  built ??= build();
  if ('launcher' in built) return built.launcher;
  if (process.env.CI === 'true') throw new Error(`${what} under CI=true: ${built.why}`);
  console.log(`SKIP ${what}: ${built.why}`);
  return undefined;
}

/** For canRunAs: whether the simulation can run here. */
export function needContainerSim(what: string): boolean {
  return containerLauncher(what) !== undefined;
}

/** bubblewrap run under the launcher as the tests' servers would run it: its exit status and complaint. */
export function bwrapUnder(launcher: string): { status: number | null; stderr: string } {
  const r = spawnSync(
    launcher,
    ['bwrap', '--unshare-user', '--unshare-pid', '--ro-bind', '/', '/', '--', 'true'],
    { encoding: 'utf8' },
  );
  return { status: r.status, stderr: (r.stderr || r.error?.message || '').trim() };
}

/** How a shared attack suite starts its servers: bubblewrap (the default) or this simulation. */
export interface SuiteVariant {
  label: string;
  need: (what: string) => boolean;
  launcher: () => string[];
  env: Record<string, string>;
  landlock: boolean;
}

/** The servers run under the container launcher with SERVICE_SANDBOX=auto: they fall back to Landlock. */
export const LANDLOCK_SIM: SuiteVariant = {
  label: 'Landlock in a simulated container',
  need: needContainerSim,
  launcher: () => [containerLauncher('the container simulation') as string],
  env: { SERVICE_SANDBOX: 'auto' },
  landlock: true,
};
