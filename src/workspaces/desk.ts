// The open workspaces as tools see them (tools/define.ts WorkspaceDesk): resolves a call's `workspace` id to
// that workspace's services (built on first use, services.ts), opens checkouts and worktrees (roots.ts,
// worktree.ts) within the bound of registry.ts, and closes them, ending their commands. The default workspace
// (--workspace, or the current directory without --projects) is the runtime itself; with --projects and no
// --workspace there is none, and a call without `workspace` gets WORKSPACE_REQUIRED.
import { rmSync } from 'node:fs';
import path from 'node:path';
import { randomHex } from '../core/random.js';
import { ToolError } from '../core/tool-error.js';
import { sealedDirsOf } from '../process/sandbox/sandbox-mounts.js';
import type { OpenWorkspaceRequest, ToolServices, WorkspaceDesk, WorkspaceView } from '../tools/define.js';
import { projectRoots, resolveWorkspacePath, strictlyInside, type ProjectRoot } from './roots.js';
import { MAX_WORKSPACES, WorkspaceRegistry, type WorkspaceRecord } from './registry.js';
import { WorkspaceServices, type SharedParts } from './services.js';
import { Instructions } from '../workspace/instructions.js';
import { makeWorktree, pendingWork, type WorktreeHost } from './worktree.js';
import type { KeptState } from '../state/state-dir.js';

export interface DeskOptions {
  shared: Omit<SharedParts, 'workspaces'>;
  /** The default workspace's services (the runtime), or undefined when there is none. */
  defaultServices: ToolServices | undefined;
  registry: WorkspaceRegistry;
  /** Where worktrees are made: `<state dir>/worktrees`, or the runtime directory when nothing is kept. */
  worktreesDir: string;
  worktreeHost: WorktreeHost;
}

const OPEN_CALL = 'open_workspace {"path": "<project directory>"}';

export class Desk implements WorkspaceDesk {
  readonly roots: readonly string[];
  private readonly real: ProjectRoot[];
  private readonly services = new Map<string, WorkspaceServices>();
  private readonly shared: SharedParts;

  constructor(private readonly o: DeskOptions) {
    this.roots = o.shared.config.projectRoots ?? [];
    this.real = projectRoots(this.roots);
    this.shared = { ...o.shared, workspaces: this };
  }

  get kept(): boolean {
    return this.o.registry.persistent;
  }

  servicesFor(id: string | undefined): ToolServices {
    if (id === undefined) {
      if (this.o.defaultServices) return this.o.defaultServices;
      throw new ToolError(
        'WORKSPACE_REQUIRED',
        'this server has no default workspace: open one with open_workspace and pass its id as `workspace`',
        {},
        { retry: OPEN_CALL },
      );
    }
    const made = this.services.get(id);
    if (made) return made;
    const rec = this.o.registry.get(id);
    if (!rec)
      throw new ToolError(
        'WORKSPACE_NOT_FOUND',
        `no open workspace has the id ${JSON.stringify(id)}`,
        { workspace: id },
        { retry: OPEN_CALL },
      );
    return this.build(rec);
  }

  private build(rec: WorkspaceRecord): WorkspaceServices {
    const s = new WorkspaceServices(
      this.shared,
      { lexical: rec.path, real: rec.path },
      { sealed: this.real.map((r) => r.real), alsoRead: rec.objects ? [rec.objects] : [] },
    );
    this.services.set(rec.id, s);
    return s;
  }

  /** The full record of an open workspace (the console's Merge needs its source and base, land.ts). */
  record = (id: string): WorkspaceRecord | undefined => this.o.registry.get(id);
  /** Its services when they were built (the console lists them without building any). */
  built = (id: string): WorkspaceServices | undefined => this.services.get(id);

  list(): WorkspaceView[] {
    return this.o.registry.list().map(viewOf);
  }

  async open(
    req: OpenWorkspaceRequest,
    signal: AbortSignal,
  ): Promise<{ view: WorkspaceView; note?: string; instructions?: string }> {
    const real = resolveWorkspacePath(req.path, this.real, this.o.shared.config.env.HOME);
    this.refuseKeptState(req.path, real);
    const again = req.mode === 'checkout' ? this.o.registry.checkoutOf(real) : undefined;
    if (again) return { view: viewOf(again), ...instructionsOf(again.path) };
    if (this.o.registry.size >= MAX_WORKSPACES)
      throw new ToolError(
        'WORKSPACE_LIMIT',
        `${MAX_WORKSPACES} workspaces are open, the most this server keeps`,
        { limit: MAX_WORKSPACES },
        {
          suggestion: 'Close one you no longer need with close_workspace {"workspace": "<id>"}, then retry.',
        },
      );
    const id = this.newId();
    const rec =
      req.mode === 'worktree' ? await this.worktree(id, real, req.base_ref ?? 'HEAD', signal) : null;
    const record: WorkspaceRecord = rec ? rec.record : { id, path: real, mode: 'checkout' };
    this.o.registry.add(record);
    const note = rec?.dirty
      ? `${real} has uncommitted changes; the worktree starts from ${record.base} and does not carry them`
      : undefined;
    return { view: viewOf(record), ...(note ? { note } : {}), ...instructionsOf(record.path) };
  }

  private async worktree(id: string, source: string, baseRef: string, signal: AbortSignal) {
    const dest = path.join(this.o.worktreesDir, id);
    const slug = path
      .basename(source)
      .replace(/[^A-Za-z0-9._-]+/g, '-')
      .replace(/^[-.]+/, '')
      .slice(0, 40);
    const branch = `wb/${slug || 'task'}-${id}`;
    const host = { ...this.o.worktreeHost, signal };
    const made = await makeWorktree(host, source, dest, branch, baseRef);
    const record: WorkspaceRecord = {
      id,
      path: dest,
      mode: 'worktree',
      branch,
      base: made.base,
      baseRef: made.baseRef,
      source,
      objects: made.objects,
    };
    return { record, dirty: made.dirty };
  }

  /** A directory holding (or inside) the server's kept state is never served. */
  private refuseKeptState(input: string, real: string): void {
    const sealed = sealedDirsOf(this.o.shared.config);
    if (sealed.some((s) => s === real || strictlyInside(s, real) || strictlyInside(real, s)))
      throw new ToolError(
        'WORKSPACE_OUTSIDE_ROOTS',
        `${JSON.stringify(input)} holds or lies in the server's kept state, which no workspace may serve`,
        { path: input, roots: this.roots },
        { suggestion: 'Open a project directory instead.' },
      );
  }

  private newId(): string {
    for (;;) {
      const id = randomHex(4);
      if (!this.o.registry.get(id)) return id;
    }
  }

  async pendingWork(id: string, signal: AbortSignal): Promise<string | undefined> {
    const rec = this.o.registry.get(id);
    if (!rec || rec.mode !== 'worktree' || !rec.source || !rec.objects || !rec.baseRef) return undefined;
    const host = { ...this.o.worktreeHost, signal };
    return pendingWork(host, {
      path: rec.path,
      source: rec.source,
      baseRef: rec.baseRef,
      objects: rec.objects,
    });
  }

  async close(id: string, remove: boolean): Promise<WorkspaceView> {
    const rec = this.o.registry.get(id);
    if (!rec) this.servicesFor(id); // WORKSPACE_NOT_FOUND
    const view = viewOf(rec as WorkspaceRecord);
    const s = this.services.get(id);
    this.services.delete(id);
    this.o.registry.remove(id);
    await s?.close();
    if (remove && rec?.mode === 'worktree') rmSync(rec.path, { recursive: true, force: true });
    return view;
  }

  /** Ends every opened workspace's commands (the runtime's shutdown). */
  async shutdown(): Promise<void> {
    const all = [...this.services.values()];
    this.services.clear();
    await Promise.all(all.map((s) => s.close()));
  }
}

/** The project's instructions as server_info and initialize give them (services are built on first use). */
function instructionsOf(real: string): { instructions?: string } {
  const text = new Instructions({ lexical: real, real }).text();
  return text ? { instructions: text } : {};
}

function viewOf(r: WorkspaceRecord): WorkspaceView {
  return {
    id: r.id,
    path: r.path,
    mode: r.mode,
    ...(r.branch ? { branch: r.branch } : {}),
    ...(r.base ? { base: r.base } : {}),
    ...(r.source ? { source: r.source } : {}),
  };
}

/** What the runtime hands over to assemble the desk (src/runtime/runtime.ts). */
export interface DeskAssembly {
  runtime: ToolServices & { readonly dirs: WorktreeHost['dirs'] };
  console: boolean;
  netAudit: SharedParts['netAudit'];
  /** The state directory, or undefined to keep nothing (then worktrees live in the runtime directory). */
  kept: KeptState | undefined;
  /** When the workspaces' jails prepare the next one (core/quiet.ts). */
  defer?: (fn: () => void) => void;
}

/** The desk of a runtime whose configuration names project roots; the kept registry is read again here. */
export function openDesk(a: DeskAssembly): Desk {
  const r = a.runtime;
  const registry = new WorkspaceRegistry(a.kept, r.log);
  registry.load();
  const worktreesDir = path.join(a.kept ? a.kept.dir : r.dirs.root, 'worktrees');
  return new Desk({
    shared: {
      config: r.config,
      clock: r.clock,
      log: r.log,
      catalog: r.catalog,
      signal: r.signal,
      console: a.console,
      approvals: r.approvals,
      defer: a.defer,
      ...(a.netAudit ? { netAudit: a.netAudit } : {}),
    },
    defaultServices: r.config.noDefaultWorkspace ? undefined : r,
    registry,
    worktreesDir,
    worktreeHost: { config: r.config, dirs: r.dirs, signal: r.signal },
  });
}
