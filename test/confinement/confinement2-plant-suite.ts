// What a command may leave behind (README "Security model": the kernel, not the command policy, must say no),
// run with the server as root and as nobody like test/confinement/confinement-commands-suite.ts: no setuid/setgid file in
// the workspace whatever the spelling (chmod, open with O_CREAT, install; apply_patch rewriting a setuid
// file drops the bits), /dev/shm small and private to each command, no new file in /dev, and with
// the workspace under /tmp a write next to it fails visibly instead of landing in a private /tmp. Every check
// of the result is made from outside (stat on the host). Spellings the command policy cannot read
// (variables, python) make the kernel the one that must refuse.
import { randomBytes } from 'node:crypto';
import {
  chmodSync,
  chownSync,
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, HUNG_MS } from '../exec/exec-support.js';
import type { SuiteVariant } from '../helpers/container-sim.js';
import {
  canRunAs,
  NOBODY,
  ownedDir,
  startBinAs,
  type BinServer,
  type RunAs,
} from '../helpers/hostile-bin.js';

const S_ISUID = 0o4000;
const S_ISGID = 0o2000;

/** Every entry under `root` (not following links) with a setuid or setgid bit, as `path mode`. */
function privileged(root: string): string[] {
  const out: string[] = [];
  const visit = (abs: string, depth: number) => {
    const st = lstatSync(abs);
    if (st.mode & (S_ISUID | S_ISGID))
      out.push(`${path.relative(root, abs) || '.'} ${(st.mode & 0o7777).toString(8)}`);
    if (st.isDirectory() && depth < 16) for (const n of readdirSync(abs)) visit(path.join(abs, n), depth + 1);
  };
  visit(root, 0);
  return out;
}

/** `variant`: servers started another way than bubblewrap (test/helpers/container-sim.ts LANDLOCK_SIM). */
export function plantSuite(as: RunAs, variant?: SuiteVariant): void {
  const d = canRunAs(as, 'the setuid, /dev and /tmp attacks', variant?.need) ? describe : describe.skip;
  const label = variant ? `, ${variant.label}` : '';
  d(`what a command leaves behind, server as ${as}${label}`, () => {
    const tag = randomBytes(4).toString('hex');
    const made: string[] = [];
    let ws: string;
    let srv: BinServer;
    let near: string; // /tmp/<random>, the parent of the second server's workspace
    let nearSrv: BinServer;
    const run = async (cmd: string, s: () => BinServer = () => srv) => {
      const r = await call(s().url, 'exec_command', { cmd, yield_time_ms: 30_000 });
      expect(r.isError, r.text).toBe(false);
      expect(r.sc.status, JSON.stringify(r.sc)).not.toBe('running');
      return r.sc as { stdout?: string; stderr?: string; status: string; exit_code?: number };
    };

    beforeAll(async () => {
      ws = ownedDir(tmpdir(), 'wb-plant-ws-', as);
      const rt = ownedDir(tmpdir(), 'wb-plant-rt-', as);
      near = ownedDir('/tmp', 'wb-near-', as);
      const nearWs = path.join(near, 'ws');
      mkdirSync(nearWs, { mode: 0o755 });
      if (as === 'nobody') chownSync(nearWs, NOBODY, NOBODY);
      made.push(ws, rt, near);
      const how = { as, launcher: variant?.launcher(), env: variant?.env };
      [srv, nearSrv] = await Promise.all([
        startBinAs({ workspace: ws, runtimeRoot: rt, ...how }),
        startBinAs({ workspace: nearWs, runtimeRoot: rt, ...how }),
      ]);
    }, HUNG_MS);
    afterAll(async () => {
      await Promise.all([srv?.stop(), nearSrv?.stop()]);
      for (const f of made) rmSync(f, { recursive: true, force: true });
    }, HUNG_MS);

    const setuidCases: Array<[string, string, string]> = [
      [
        'cp /bin/bash suidsh; chmod 4755 suidsh',
        'cp /bin/bash suidsh; chmod 4755 suidsh; ls -l suidsh',
        'suidsh',
      ],
      [
        "python3 os.open('s2', O_CREAT|O_WRONLY, 0o4755)",
        `python3 -c "import os; os.close(os.open('s2', os.O_CREAT|os.O_WRONLY, 0o4755))"; ls -l s2`,
        's2',
      ],
      ['install -m 4755 /bin/true s3', 'install -m 4755 /bin/true s3; ls -l s3', 's3'],
      ['touch g; chmod g+s g', 'touch g; chmod g+s g; ls -l g', 'g'],
    ];
    for (const [title, cmd, file] of setuidCases) {
      it(`setuid plant: \`${title}\` leaves no setuid/setgid file in the workspace`, async () => {
        try {
          const r = await run(cmd);
          console.log(`[plant ${as}] ${title}: ${(r.stdout ?? '').trim()} ${(r.stderr ?? '').trim()}`);
          expect(privileged(ws), `${file} kept a setuid/setgid bit`).toEqual([]);
        } finally {
          rmSync(path.join(ws, file), { force: true }); // each case on its own
        }
      });
    }

    for (const tool of ['apply_patch'] as const) {
      it(`${tool} rewriting a 4755 file drops the setuid bit and keeps 0755`, async () => {
        const file = path.join(ws, `tool-${tool}.sh`);
        writeFileSync(file, '#!/bin/sh\necho one\n');
        if (as === 'nobody') chownSync(file, NOBODY, NOBODY);
        chmodSync(file, 0o4755);
        const rel = path.basename(file);
        const args =
          tool === 'apply_patch'
            ? { patch: `*** Begin Patch\n*** Update File: ${rel}\n@@\n-echo one\n+echo two\n*** End Patch\n` }
            : { path: rel, old_string: 'echo one', new_string: 'echo two' };
        const r = await call(srv.url, tool, args);
        expect(r.isError, r.text).toBe(false);
        expect((statSync(file).mode & 0o7777).toString(8)).toBe('755');
        rmSync(file);
      });
    }

    // Landlock cannot give a command a /dev/shm of its own (it would be the host's, shared by every command):
    // there it is not writable at all.
    if (variant?.landlock)
      it('/dev/shm is not writable under Landlock: a write fails and nothing lands in the host /dev/shm', async () => {
        const name = `wb-shm-${tag}`;
        const r = await run(`d=/dev/shm; echo x > $d/${name}; echo "rc=$?"`);
        expect(r.stdout).toMatch(/rc=[1-9]/);
        expect(r.stderr).toMatch(/Permission denied/);
        expect(existsSync(`/dev/shm/${name}`)).toBe(false);
      });
    else
      it('/dev/shm is small and private: 256 MiB into /dev/shm/x fails or is capped, and the next command sees no x', async () => {
        const r = await run(
          'd=/dev/shm; dd if=/dev/zero of=$d/x bs=1M count=256 2>&1 | tail -n 1; echo "rc=${PIPESTATUS[0]} size=$(stat -c %s $d/x 2>/dev/null || echo 0)"',
        );
        console.log(`[plant ${as}] /dev/shm: ${(r.stdout ?? '').trim()}`);
        const m = /rc=(\d+) size=(\d+)/.exec(r.stdout ?? '');
        expect(m, r.stdout).not.toBeNull();
        const [rc, size] = [Number(m?.[1]), Number(m?.[2])];
        expect(rc !== 0 || size < 256 * 1024 * 1024, `dd exited ${rc} with ${size} bytes in /dev/shm/x`).toBe(
          true,
        );
        const next = await run('d=/dev/shm; ls -A $d; echo end');
        expect(next.stdout).not.toMatch(/^x$/m);
      });

    it('writing a new file into /dev itself fails', async () => {
      const r = await run(
        `d=/dev; touch $d/newfile-${tag}; echo "rc=$?"; python3 -c "open('$d/py-${tag}','w')" 2>&1 | tail -n 1`,
      );
      expect(r.stdout).toMatch(/rc=[1-9]/);
      expect(r.stdout).toMatch(/Error/);
      const after = await run(`d=/dev; ls -A $d | grep -c ${tag}; true`);
      expect(after.stdout?.trim()).toBe('0');
    });

    it('workspace under /tmp: `echo x > ../x` fails visibly (read-only) and nothing appears next to the workspace on the host', async () => {
      const r = await run('f=..; echo x > $f/x; echo "rc=$?"', () => nearSrv);
      expect(r.stdout).toMatch(/rc=[1-9]/);
      expect(r.stderr).toMatch(/Read-only file system|Permission denied/);
      expect(existsSync(path.join(near, 'x'))).toBe(false);
    });

    it('workspace under /tmp: `echo y > /tmp/y-<random>` never lands in the host /tmp', async () => {
      const y = `/tmp/y-${tag}`;
      const r = await run(`y=${y}; echo y > $y; echo "rc=$?"`, () => nearSrv);
      console.log(`[plant ${as}] /tmp/y: ${(r.stdout ?? '').trim()} ${(r.stderr ?? '').trim()}`);
      expect(existsSync(y)).toBe(false);
    });
  });
}
