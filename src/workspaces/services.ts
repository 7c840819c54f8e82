// The services of one opened workspace (docs/architecture.md#several-workspaces): what the runtime builds
// around the default workspace (src/runtime/runtime.ts), built again around this one — its own root, runtime
// directory, jail, search, listing helper, commands (ids, output, limits, a sandbox of this root), patch
// locks, baseline, edit journal, grants, approvals and instructions. Server-wide parts (configuration, clock,
// log, catalog, audit) are the runtime's. Commands and jails of an opened workspace also hide every project
// root (the main checkout, the other workspaces) and, for a worktree, show its source's object directory
// read-only (its alternate), nothing else of the source repository.
import type { Config } from '../config/load.js';
import type { Clock } from '../core/clock.js';
import type { Logger } from '../core/log.js';
import type { NetHost } from '../process/net/net-access.js';
import { placeProgram } from '../process/native.js';
import { createRuntimeDirs, removeRuntimeDirs, type RuntimeDirs } from '../process/runtime-dir.js';
import { CommandRegistry } from '../process/commands/registry.js';
import { ToolJail } from '../process/jail/jail.js';
import { privateFilesOf, sealedDirsOf } from '../process/sandbox/sandbox-mounts.js';
import type { SandboxStatus } from '../process/sandbox/sandbox.js';
import { StatBatch } from '../process/stat-batch.js';
import { ChangeBaseline } from '../git/baseline.js';
import { ReviewPoints } from '../git/review-points.js';
import { FileLocks } from '../patch/locks.js';
import { EditJournal } from '../patch/journal.js';
import { ApprovalDesk } from '../policy/approvals.js';
import { OneTimeGrants } from '../policy/grants.js';
import type { ToolServices, WorkspaceDesk } from '../tools/define.js';
import type { WorkspaceRoot } from '../workspace/paths.js';
import { Instructions } from '../workspace/instructions.js';
import { SearchEngines } from '../workspace/search/engines.js';

/** What every workspace shares: the runtime's own parts. */
export interface SharedParts {
  readonly config: Config;
  readonly clock: Clock;
  readonly log: Logger;
  readonly catalog: ToolServices['catalog'];
  readonly signal: AbortSignal;
  /** The console is on: journals and approvals are kept per workspace. */
  readonly console: boolean;
  readonly netAudit?: NetHost['audit'];
  readonly workspaces?: WorkspaceDesk;
  /** The runtime's approval desk: a console page watching it attends every workspace's (policy/approvals.ts). */
  readonly approvals?: ApprovalDesk | undefined;
  /** When a workspace's jails prepare the next one: after the answer is out (core/quiet.ts). */
  readonly defer?: ((fn: () => void) => void) | undefined;
}

/** What a workspace shows its commands and jails beyond its own root. */
export interface WorkspaceView {
  /** Hidden: the project roots (other workspaces and the main checkout live there). */
  readonly sealed: readonly string[];
  /** Read-only: a worktree's source object directory. */
  readonly alsoRead: readonly string[];
}

export class WorkspaceServices implements ToolServices {
  readonly config: Config;
  readonly clock: Clock;
  readonly log: Logger;
  readonly catalog: ToolServices['catalog'];
  readonly signal: AbortSignal;
  readonly dirs: RuntimeDirs;
  readonly jail: ToolJail;
  readonly search: SearchEngines;
  readonly stats: StatBatch;
  readonly commands: CommandRegistry;
  readonly instructions: Instructions;
  readonly patchLocks = new FileLocks();
  readonly baseline = new ChangeBaseline();
  readonly grants: OneTimeGrants;
  readonly approvals: ApprovalDesk | undefined;
  readonly edits: EditJournal | undefined;
  /** show_changes' review points in this workspace (git/review-points.ts), in its own runtime directory. */
  readonly reviews: ReviewPoints;
  readonly sharedObjects: readonly string[];
  readonly workspaces: WorkspaceDesk | undefined;

  constructor(
    shared: SharedParts,
    readonly root: WorkspaceRoot,
    view: WorkspaceView,
  ) {
    const c = shared.config;
    this.config = c;
    this.clock = shared.clock;
    this.log = shared.log;
    this.catalog = shared.catalog;
    this.signal = shared.signal;
    this.workspaces = shared.workspaces;
    this.sharedObjects = view.alsoRead;
    this.grants = new OneTimeGrants(this.clock);
    this.approvals = shared.console ? new ApprovalDesk(this.clock, shared.approvals) : undefined;
    this.edits = shared.console ? new EditJournal(this.clock) : undefined;
    this.instructions = new Instructions(root);
    this.dirs = createRuntimeDirs(
      { configured: c.runtimeRoot, xdgRuntimeDir: c.env.XDG_RUNTIME_DIR },
      root.real,
    );
    this.jail = new ToolJail({
      requested: c.sandbox,
      pathVar: c.env.PATH,
      workspaceReal: root.real,
      dirs: this.dirs,
      privateFiles: privateFilesOf(c),
      sealed: [...sealedDirsOf(c), ...view.sealed],
      readAllow: c.readAllow ?? [],
      alsoRead: view.alsoRead,
      ...(shared.defer ? { defer: shared.defer } : {}),
    });
    this.search = new SearchEngines(c.env, this.jail, {
      clock: this.clock,
      defer: shared.defer ?? setImmediate,
    });
    this.reviews = new ReviewPoints(this);
    this.stats = new StatBatch(root.real, placeProgram('wb-stat', this.dirs.root));
    this.commands = new CommandRegistry({
      config: c,
      dirs: this.dirs,
      root,
      clock: this.clock,
      log: this.log,
      view,
      ...(shared.netAudit ? { audit: shared.netAudit } : {}),
      ...(shared.defer ? { defer: shared.defer } : {}),
    });
    this.commands.startUp();
  }

  sandboxStatus(): SandboxStatus {
    return this.commands.sandboxStatus();
  }

  /** Ends its commands and helpers and removes its runtime directory. */
  async close(): Promise<void> {
    this.stats.close();
    this.jail.close();
    try {
      await this.commands.shutdown();
    } finally {
      const left = removeRuntimeDirs(this.dirs);
      if (left) this.log.warn('a workspace runtime directory could not be removed', { error: String(left) });
    }
  }
}
