// The single runtime that owns the workspace (docs/design-notes.md#one-workspace-one-runtime): root,
// configuration, clock, logger, the tool catalog and project instructions. Later layers (commands, patch
// locks, OAuth stores) hang off it, so every client, transport and connection sees the same state.
// Assembly, then start: the constructor builds every part, each handed what it needs through its own
// constructor, and writes nothing but the runtime directory they are built around; start() starts what runs
// (the sandbox probe, timers, the clean-up of a crashed instance), and shutdown() ends it all.
import type { Config } from '../config/load.js';
import { systemClock, type Clock } from '../core/clock.js';
import type { Logger } from '../core/log.js';
import type { Catalog } from '../tools/catalog.js';
import { catalogFor } from '../tools/lazy-catalog.js';
import type { WorkspaceRoot } from '../workspace/paths.js';
import { AuditLog } from '../core/audit.js';
import { Instructions } from '../workspace/instructions.js';
import { SearchEngines } from '../workspace/search/engines.js';
import { StatBatch } from '../process/stat-batch.js';
import { placeProgram } from '../process/native.js';
import { FileLocks } from '../patch/locks.js';
import { createRuntimeDirs, removeRuntimeDirs, type RuntimeDirs } from '../process/runtime-dir.js';
import { CommandRegistry } from '../process/commands/registry.js';
import { privateFilesOf, sealedDirsOf } from '../process/sandbox/sandbox-mounts.js';
import type { SandboxStatus } from '../process/sandbox/sandbox.js';
import { QuietTime } from '../core/quiet.js';
import { ToolJail } from '../process/jail/jail.js';
import { ChangeBaseline } from '../git/baseline.js';
import { ReviewPoints } from '../git/review-points.js';
import { OneTimeGrants } from '../policy/grants.js';
import { ApprovalDesk } from '../policy/approvals.js';
import { ActivityFeed } from '../core/activity.js';
import { EditJournal } from '../patch/journal.js';
import { Feed } from '../core/feed.js';
import type { KeptState } from '../state/state-dir.js';
import { openDesk, type Desk } from '../workspaces/desk.js';
import type { NetHost } from '../process/net/net-access.js';

export interface RuntimeOptions {
  config: Config;
  root: WorkspaceRoot;
  log: Logger;
  clock?: Clock;
  /** Code to load with the tool modules, before the first tool call (tools/lazy-catalog.ts). */
  preload?: () => Promise<unknown>;
  /** The state directory, when one is kept: open workspaces are kept there (src/workspaces/). */
  kept?: KeptState;
}

export class Runtime {
  readonly config: Config;
  readonly root: WorkspaceRoot;
  readonly log: Logger;
  readonly clock: Clock;
  readonly catalog: Catalog;
  readonly instructions: Instructions;
  readonly audit: AuditLog | undefined;
  readonly search: SearchEngines;
  /** The batch lstat of listings (native/wb-stat), started on first use. */
  readonly stats: StatBatch;
  /** apply_patch's per-file locks, shared by every client (docs/design-notes.md#same-file-concurrency). */
  readonly patchLocks = new FileLocks();
  readonly startedAt: number;
  /** Per-instance HOME/TMPDIR/cache for children, outside the workspace. */
  readonly dirs: RuntimeDirs;
  /** Where git and ripgrep run: the workspace read-only, nothing else of the host (process/jail/jail.ts). */
  readonly jail: ToolJail;
  /** Commands: workspace resources any client may continue by id (docs/design-notes.md#one-workspace-one-runtime); ended at shutdown. */
  readonly commands: CommandRegistry;
  /** No object directory outside the workspace is shown to git (a worktree workspace's is, src/workspaces/). */
  readonly sharedObjects: readonly string[] = [];
  /** Originals of files apply_patch changed, for git_diff outside a repository (git/baseline). */
  readonly baseline = new ChangeBaseline();
  /** One-time grants asked through the client (docs/design-notes.md#permission-grants). */
  readonly grants: OneTimeGrants;
  /** The operator's console's parts (docs/console.md), over HTTP unless SERVICE_CONSOLE=0. */
  readonly activity: ActivityFeed | undefined;
  /** Tool calls being answered: the next jail is prepared after the answer (core/quiet.ts). */
  readonly quiet = new QuietTime();
  private readonly defer = (fn: () => void) => this.quiet.later(fn);
  readonly approvals: ApprovalDesk | undefined;
  readonly edits: EditJournal | undefined;
  /** show_changes' review points (git/review-points.ts), kept in the runtime directory for this run. */
  readonly reviews: ReviewPoints;
  /** Hosts the `safe` network proxy refused lately, for the console's Safety section. */
  readonly netBlocks: Feed<{ time: number; host: string; reason: string }> | undefined;
  /** The open workspaces when project roots are configured (src/workspaces/), else undefined. */
  readonly workspaces: Desk | undefined;
  private started = false;
  private readonly shutdownController = new AbortController();
  private readonly shutdownHooks: Array<() => Promise<void> | void> = [];

  constructor(opts: RuntimeOptions) {
    this.config = opts.config;
    this.root = opts.root;
    this.log = opts.log;
    this.clock = opts.clock ?? systemClock;
    this.grants = new OneTimeGrants(this.clock);
    const consoleOn = opts.config.console && !opts.config.stdio;
    this.activity = consoleOn ? new ActivityFeed() : undefined;
    this.approvals = consoleOn ? new ApprovalDesk(this.clock) : undefined;
    this.edits = consoleOn ? new EditJournal(this.clock) : undefined;
    this.netBlocks = consoleOn ? new Feed(50) : undefined;
    this.startedAt = this.clock.now();
    this.catalog = catalogFor({
      enableViewImage: opts.config.enableViewImage,
      ...(opts.config.projectRoots?.length ? { workspaces: true } : {}),
      fakeReadonly: opts.config.dangerouslyFakeReadonlyAnnotations,
      ...(opts.preload ? { alsoLoad: opts.preload } : {}),
    });
    this.instructions = new Instructions(opts.root);
    this.audit = opts.config.auditLog ? new AuditLog(opts.config.auditLog, this.clock) : undefined;
    this.dirs = createRuntimeDirs(
      { configured: opts.config.runtimeRoot, xdgRuntimeDir: opts.config.env.XDG_RUNTIME_DIR },
      opts.root.real,
    );
    this.jail = new ToolJail({
      requested: opts.config.sandbox,
      pathVar: opts.config.env.PATH,
      workspaceReal: opts.root.real,
      dirs: this.dirs,
      privateFiles: privateFilesOf(opts.config),
      sealed: sealedDirsOf(opts.config),
      readAllow: opts.config.readAllow ?? [],
      onRun: (n) => this.log.debug('tool jail run', { ...n }),
      defer: this.defer,
    });
    this.search = new SearchEngines(opts.config.env, this.jail, { clock: this.clock, defer: this.defer });
    this.reviews = new ReviewPoints(this);
    this.stats = new StatBatch(opts.root.real, placeProgram('wb-stat', this.dirs.root));
    const netAudit = netAuditOf(this.audit, this.netBlocks, this.clock);
    this.commands = new CommandRegistry({
      config: this.config,
      dirs: this.dirs,
      root: this.root,
      clock: this.clock,
      log: this.log,
      audit: netAudit,
      defer: this.defer,
    });
    this.workspaces = opts.config.projectRoots?.length
      ? openDesk({ runtime: this, console: consoleOn, netAudit, kept: opts.kept, defer: this.defer })
      : undefined;
  }

  /**
   * Starts what runs beside the server, once: the command registry's start-up (process/commands/registry.ts: the sandbox
   * probe when SERVICE_SANDBOX names one, which throws SandboxUnavailableError when it cannot run; the retention
   * sweep; the end of what a crashed earlier instance left running). The composition root (cli/main.ts) calls
   * it before serving either transport; the helpers start later, in the warm-up after the ready line
   * (cli/warm-up.ts).
   */
  async start(): Promise<void> {
    if (this.started) throw new Error('the runtime was already started');
    this.started = true;
    this.commands.startUp();
  }

  /** What confines commands. */
  sandboxStatus(): SandboxStatus {
    return this.commands.sandboxStatus();
  }

  get signal(): AbortSignal {
    return this.shutdownController.signal;
  }

  onShutdown(hook: () => Promise<void> | void): void {
    this.shutdownHooks.push(hook);
  }

  async shutdown(): Promise<void> {
    if (this.shutdownController.signal.aborted) return;
    this.shutdownController.abort();
    this.stats.close();
    this.jail.close();
    const last = [() => this.workspaces?.shutdown(), () => this.commands.shutdown()];
    for (const h of [...this.shutdownHooks.reverse(), ...last]) {
      try {
        await h();
      } catch (e) {
        this.log.warn('shutdown step failed', { error: String(e) });
      }
    }
    const left = removeRuntimeDirs(this.dirs);
    // What is left is removed by the next start on this workspace (runtime-dir.ts).
    if (left) this.log.warn('the runtime directory could not be removed', { error: String(left) });
  }
}

/** The proxy's decisions go to the audit log and, when the console is on, to its list of recent blocks. */
function netAuditOf(
  audit: AuditLog | undefined,
  netBlocks: Runtime['netBlocks'],
  clock: Clock,
): NetHost['audit'] {
  return {
    network: (e) => {
      audit?.network(e);
      if (netBlocks && !e.allowed)
        netBlocks.publish({ time: clock.now(), host: e.host, reason: e.reason ?? 'refused' });
    },
  };
}
