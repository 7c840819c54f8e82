// What a command sees of the host (docs/security-model.md#what-a-command-sees, #kept-state, #descriptors),
// with the workspace outside /tmp and the home directories — under /srv, where a deny-list view showed
// everything next to it. Run with the server as root and as nobody, in bubblewrap and (with a `variant`,
// test/helpers/container-sim.ts LANDLOCK_SIM) in the Landlock sandbox of a simulated container:
//  - a `safe` command cannot read another project's .env under /srv, a config under /opt, data under
//    /var/lib or a sibling of the workspace; it can with SERVICE_READ_ALLOW naming one; `trusted` can;
//  - with XDG_STATE_HOME under /srv, no command reads the kept state (console.json, bearer-token,
//    oauth-signing-key) of this instance or of another one sharing the state root;
//  - servers started holding descriptor 200 (appending to a file) and 300 (a canary only root can read): no
//    command — pipes or terminal, safe, trusted or dangerous — has them, writes into the file or reads the canary;
//  - node, python3, git and cc (compile and run) still work in `safe`.
import { randomBytes } from 'node:crypto';
import { chmodSync, chownSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { workspaceId } from '../../src/state/state-dir.js';
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

type Sc = { stdout?: string; stderr?: string; output?: string; status: string; exit_code?: number };
const KEPT = ['console.json', 'bearer-token', 'oauth-signing-key'];

export function viewSuite(as: RunAs, variant?: SuiteVariant): void {
  const label = variant ? variant.label : 'bubblewrap';
  const d = canRunAs(as, `the host-view tests (${label})`, variant?.need) ? describe : describe.skip;
  d(`what a command sees of the host, ${label}, server as ${as}`, () => {
    const tag = randomBytes(6).toString('hex');
    const canary = `VIEW-CANARY-${tag}`;
    const made: string[] = [];
    let base: string;
    let ws: string;
    let secrets: Record<'env' | 'opt' | 'varlib' | 'sibling', string>;
    let stateFiles: string[];
    let leakLog: string;
    let toolBin: string;
    const servers = {} as Record<'safe' | 'allowed' | 'trusted' | 'dangerous', BinServer>;
    const own = (p: string) => as === 'nobody' && chownSync(p, NOBODY, NOBODY);
    const plant = (file: string, mode = 0o644) => {
      mkdirSync(path.dirname(file), { recursive: true, mode: 0o755 });
      writeFileSync(file, `${canary}\n`, { mode });
      return file;
    };
    const run = async (s: BinServer, cmd: string, tty = false): Promise<string> => {
      const r = await call(s.url, 'exec_command', { cmd, tty, yield_time_ms: 30_000 });
      expect(r.isError, r.text).toBe(false);
      const sc = r.sc as Sc;
      expect(sc.status, JSON.stringify(sc)).not.toBe('running');
      return `${sc.stdout ?? ''}${sc.output ?? ''}${sc.stderr ?? ''}`;
    };

    beforeAll(async () => {
      // Each made by the test, mode 0755 (the unprivileged server walks through them), removed after.
      const [srv, opt, varlib] = ['/srv', '/opt', '/var/lib'].map((p) => {
        const dir = mkdtempSync(`${p}/wb-test-`);
        chmodSync(dir, 0o755);
        made.push(dir);
        return dir;
      }) as [string, string, string];
      base = srv;
      secrets = {
        env: plant(path.join(base, 'other-project', '.env')),
        opt: plant(path.join(opt, 'app', 'config')),
        varlib: plant(path.join(varlib, 'data')),
        sibling: plant(path.join(base, 'sibling', 'notes.txt')),
      };
      // A program installed under /opt, whose bin/ is on the server's PATH: its prefix is shown, /opt is not.
      toolBin = path.join(opt, 'tool', 'bin');
      mkdirSync(toolBin, { recursive: true, mode: 0o755 });
      writeFileSync(path.join(opt, 'tool', 'data'), 'TOOL-DATA\n', { mode: 0o644 });
      writeFileSync(path.join(toolBin, `wb-tool-${tag}`), `#!/bin/sh\ncat '${opt}/tool/data'\n`, {
        mode: 0o755,
      });
      ws = ownedDir(base, 'ws-', as);
      const rt = ownedDir(base, 'rt-', as);
      // The state root every server here shares: this workspace's directory and another instance's, each
      // holding the kept files (the server's own user's, 0600, as the server writes them).
      const state = ownedDir(base, 'state-', as);
      const root = path.join(state, 'workbench-mcp');
      mkdirSync(root, { mode: 0o700 });
      own(root);
      stateFiles = [];
      for (const id of [workspaceId(ws), randomBytes(8).toString('hex')]) {
        mkdirSync(path.join(root, id), { mode: 0o700 });
        own(path.join(root, id));
        for (const name of KEPT.filter((n) => id !== workspaceId(ws) || n !== 'console.json')) {
          const f = plant(path.join(root, id, name), 0o600);
          own(f);
          stateFiles.push(f);
        }
      }
      // Descriptors the launcher leaves open: 200 appends to a file outside, 300 reads a canary only root can.
      leakLog = path.join(base, 'leak.log');
      writeFileSync(leakLog, '', { mode: 0o666 });
      const fdCanary = plant(`/root/wb-view-fd-${tag}.txt`, 0o600);
      made.push(fdCanary);
      const launcher = [
        ...(variant?.launcher() ?? []),
        'bash', // dash takes single-digit descriptors only
        '-c',
        `exec "$@" 200>>'${leakLog}' 300<'${fdCanary}'`,
        'bash',
      ];
      const how = {
        runtimeRoot: rt,
        as,
        launcher,
        workspace: ws,
      };
      const env = { ...variant?.env, XDG_STATE_HOME: state, SERVICE_STATE_DIR: '' };
      const start = (extra: Record<string, string>) => startBinAs({ ...how, env: { ...env, ...extra } });
      [servers.safe, servers.allowed, servers.trusted, servers.dangerous] = await Promise.all([
        start({ PATH: `${toolBin}:${process.env.PATH ?? '/usr/bin:/bin'}` }),
        start({ SERVICE_READ_ALLOW: `${path.dirname(secrets.env)}:${state}` }),
        start({ SERVICE_PERMISSION_MODE: 'trusted' }),
        start({ SERVICE_PERMISSION_MODE: 'dangerous', SERVICE_SANDBOX: 'off' }),
      ]);
    }, HUNG_MS);

    afterAll(async () => {
      await Promise.all(Object.values(servers).map((s) => s?.stop()));
      for (const p of made) rmSync(p, { recursive: true, force: true });
    });

    const cats = () => Object.values(secrets).map((f) => `cat '${f}'`);

    it('safe: another project, /opt, /var/lib and the workspace siblings are out of sight', async () => {
      expect(await run(servers.safe, `${cats().join('; ')}; true`)).not.toContain(canary);
      // The workspace and the runtime directory's bound parts may show as bare mount points, nothing else.
      const listed = await run(servers.safe, `ls '${base}' 2>/dev/null; true`);
      expect(listed).not.toMatch(/sibling|other-project|state-|leak\.log/);
    });

    it("safe: a program under /opt whose bin/ is on PATH runs and reads its own prefix, not /opt's rest", async () => {
      const out = await run(servers.safe, `wb-tool-${tag}; cat '${secrets.opt}'; true`);
      expect(out).toContain('TOOL-DATA');
      expect(out).not.toContain(canary);
      // bubblewrap: /opt holds only the directories leading to the prefix; Landlock: /opt cannot be listed.
      const listed = (await run(servers.safe, 'ls /opt 2>/dev/null; true')).split('\n').filter(Boolean);
      const ours = path.basename(path.dirname(path.dirname(toolBin)));
      expect(listed.filter((n) => n !== ours)).toEqual([]);
    });

    it('safe with SERVICE_READ_ALLOW: the named directory is readable, nothing else is', async () => {
      const out = await run(
        servers.allowed,
        `cat '${secrets.env}'; echo; ${cats().slice(1).join('; ')}; true`,
      );
      expect(out.split(canary).length - 1, out).toBe(1);
      const w = path.join(path.dirname(secrets.env), 'w');
      const write = await run(
        servers.allowed,
        `python3 -c 'open("${w}", "w")' 2>/dev/null && echo WROTE; true`,
      );
      expect(write).not.toContain('WROTE');
    });

    it('trusted keeps the whole host in view (but what is masked)', async () => {
      const out = await run(servers.trusted, `${cats().join('; ')}; true`);
      expect(out.split(canary).length - 1, out).toBe(4);
    });

    it('no command reads the kept state of this or another instance (even when SERVICE_READ_ALLOW names it)', async () => {
      const cmd = `${stateFiles.map((f) => `cat '${f}'`).join('; ')}; true`;
      const list = `ls -R '${path.dirname(path.dirname(stateFiles[0] as string))}' 2>/dev/null; true`;
      for (const [name, s] of Object.entries(servers).slice(0, 3)) {
        expect(await run(s, cmd), name).not.toContain(canary);
        // Landlock cannot hide names below a directory it lets list (docs/security-model.md): contents only.
        const l = variant?.landlock ? '' : await run(s, list);
        expect(l, `${name}: ${l}`).not.toMatch(/bearer-token|oauth-signing-key|console\.json/);
      }
    });

    it('no command has the descriptors the server inherited: pipes and terminal, every mode', async () => {
      // No pipeline or substitution while ls looks (the shell would hold its pipe's descriptors), and one line
      // of output at the end (a terminal command answers once its first output pauses).
      const probe =
        'ls /proc/$$/fd > .fds; (echo LEAK >&200) 2>/dev/null && w=W200; r=$( (cat <&300) 2>/dev/null ); ' +
        'echo "FDS $(tr "\\n" " " < .fds)|$w|$r|END"';
      for (const [name, s] of Object.entries(servers)) {
        for (const tty of [false, true]) {
          const out = await run(s, probe, tty);
          const what = `${name} tty=${tty}: ${out}`;
          const m = /FDS ([\d ]*)\|([^|]*)\|([^|]*)\|END/.exec(out);
          expect(m, what).not.toBeNull();
          const fds = (m?.[1] ?? '').trim().split(/\s+/).map(Number);
          expect(fds, what).toEqual([0, 1, 2]);
          expect(m?.[2], what).toBe('');
          expect(out, what).not.toContain(canary);
        }
      }
      expect(readFileSync(leakLog, 'utf8')).toBe('');
    });

    it('safe: node, python3, git and cc (compile and run) still work', async () => {
      const cmd = [
        `node -e 'console.log("node-" + (6 * 7))'`,
        `python3 -c 'print("py-" + str(6 * 7))'`,
        'git init -q g && git -C g -c user.email=t@t -c user.name=t commit -q --allow-empty -m m && git -C g log --format=git-%s',
        `printf '#include <stdio.h>\\nint main(void){puts("cc-42");return 0;}\\n' > t.c && cc -o t t.c && ./t`,
      ].join('; ');
      const out = await run(servers.safe, cmd);
      for (const want of ['node-42', 'py-42', 'git-m', 'cc-42']) expect(out, out).toContain(want);
    });
  });
}
