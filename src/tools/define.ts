// What a tool is: one definition object per tool file. Handlers get validated arguments and a ToolContext and
// return an outcome; they never see HTTP, the protocol era or a token (docs/architecture.md#style, rule 2).
import type * as z from 'zod';
import type { Config } from '../config/load.js';
import type { Clock } from '../core/clock.js';
import type { Logger } from '../core/log.js';
import type { BaselineHost } from '../git/baseline.js';
import type { GitHost } from '../git/run.js';
import type { FileLocks } from '../patch/locks.js';
import type { OneTimeGrants } from '../policy/grants.js';
import type { ApprovalDesk } from '../policy/approvals.js';
import type { EditJournal } from '../patch/journal.js';
import type { ReviewPoints } from '../git/review-points.js';
import type { ToolJail } from '../process/jail/jail.js';
import type { CommandRegistry } from '../process/commands/registry.js';
import type { RuntimeDirs } from '../process/runtime-dir.js';
import type { SandboxStatus } from '../process/sandbox/sandbox.js';
import type { WorkspaceRoot } from '../workspace/paths.js';
import type { Instructions } from '../workspace/instructions.js';
import type { StatBatch } from '../process/stat-batch.js';
import type { SearchEngines } from '../workspace/search/engines.js';
import type { Principal } from '../core/principal.js';
import type { InputRequiredPayload } from '../policy/grants.js';

export interface ToolAnnotations {
  readOnlyHint: boolean;
  destructiveHint: boolean;
  idempotentHint: boolean;
  openWorldHint: boolean;
}

export interface ImageBlock {
  type: 'image';
  data: string;
  mimeType: string;
}

export interface ToolOutcome<S extends object = Record<string, unknown>> {
  /** The complete machine result (without `ok`, added by tools/result): the tool's output schema's type. */
  structured: S;
  /** One concise text block written for a model. */
  text: string;
  /** Extra content blocks after the text (view_image). */
  extra?: ImageBlock[];
  /** Data for the client's host, not the model (the review card's patch, docs/review-card.md#data): the result's `_meta`. */
  meta?: Record<string, unknown>;
}

/** What a call may ask of the client's user (docs/design-notes.md#permission-grants); a handler never sees the era itself. */
export interface Consent {
  /** The client can ask its user: a 2026-07-28 request whose client declared the elicitation capability. */
  canAsk: boolean;
  /** On a retried call: the `requestState` and `inputResponses` it carries (unchecked). */
  requestState?: unknown;
  inputResponses?: unknown;
}

/**
 * What tools may use of the server: the composition root (src/runtime/runtime.ts) builds each part once; each
 * tool names in `uses` the members it needs and is handed those alone (ToolContext).
 */
export interface ToolServices extends GitHost, BaselineHost {
  readonly config: Config;
  readonly root: WorkspaceRoot;
  readonly dirs: RuntimeDirs;
  readonly clock: Clock;
  readonly log: Logger;
  /** The tool names in catalog order (tools/catalog.ts). */
  readonly catalog: { readonly names: readonly string[] };
  readonly instructions: Instructions;
  readonly search: SearchEngines;
  /** The batch lstat of listings (process/stat-batch.ts). */
  readonly stats?: StatBatch | undefined;
  readonly patchLocks: FileLocks;
  readonly commands: CommandRegistry;
  readonly grants: OneTimeGrants;
  /** The operator's approvals, when the console is on (docs/console.md#approvals). */
  readonly approvals?: ApprovalDesk | undefined;
  /** What apply_patch and edit_file changed, for the console's diffs and reverts (docs/console.md#edits). */
  readonly edits?: EditJournal | undefined;
  /** show_changes' review points (git/review-points.ts). */
  readonly reviews: ReviewPoints;
  readonly jail: ToolJail;
  sandboxStatus(): SandboxStatus;
  /** The open workspaces (src/workspaces/), when project roots are configured (docs/tools.md#several-workspaces). */
  readonly workspaces?: WorkspaceDesk | undefined;
}

/** One open workspace as results and server_info show it. */
export interface WorkspaceView {
  id: string;
  /** Its real path (a worktree's: the directory the server made for it). */
  path: string;
  mode: 'checkout' | 'worktree';
  /** A worktree: its branch, the commit it started from, and the repository it was cloned from. */
  branch?: string;
  base?: string;
  source?: string;
}

export interface OpenWorkspaceRequest {
  path: string;
  mode: 'checkout' | 'worktree';
  base_ref?: string;
}

/**
 * The registry of open workspaces as tools see it (src/workspaces/desk.ts implements it): the dispatcher
 * resolves a call's `workspace` argument through `servicesFor`, open_workspace and close_workspace act on it.
 */
export interface WorkspaceDesk {
  /** The project roots as configured. */
  readonly roots: readonly string[];
  /** Whether open workspaces are kept across restarts (false with SERVICE_STATE_DIR=off). */
  readonly kept: boolean;
  /** The services of workspace `id`, or of the default workspace when undefined; WORKSPACE_* errors else. */
  servicesFor(id: string | undefined): ToolServices;
  /** Opens (or finds the open checkout of) a directory; `instructions`: its AGENTS.md / CLAUDE.md text. */
  open(
    req: OpenWorkspaceRequest,
    signal: AbortSignal,
  ): Promise<{ view: WorkspaceView; note?: string; instructions?: string }>;
  /** The worktree's uncommitted and unmerged work, as a sentence, or undefined when there is none. */
  pendingWork(id: string, signal: AbortSignal): Promise<string | undefined>;
  close(id: string, remove: boolean): Promise<WorkspaceView>;
  list(): WorkspaceView[];
}

/** One service a tool may declare in `uses`: a member of ToolServices. */
export type ServiceName = keyof ToolServices;

/** What a tool that declared the services `U` sees of the server: those members, nothing else. */
export type Services<U extends ServiceName> = Pick<ToolServices, U>;

/**
 * What a handler gets beside its arguments. `runtime` holds exactly the services the tool declared in `uses`
 * (the registry builds it with only those keys, tools/registry.ts); the default, every service, is what the
 * protocol layer hands the registry.
 */
export interface ToolContext<U extends ServiceName = ServiceName> {
  runtime: Services<U>;
  principal: Principal;
  /** Aborted when the server shuts down; never by a client's cancellation of a command. */
  signal: AbortSignal;
  consent?: Consent;
  /** The client declared MCP Apps (tools/apps.ts): a tool with a card adds its data for the host (`meta`). */
  ui?: boolean;
}

/** Thrown by a handler that needs the user's answer first; the dispatcher answers `input_required`. */
export class InputRequired extends Error {
  constructor(readonly payload: InputRequiredPayload) {
    super('input required');
  }
}

/**
 * One tool: its arguments are its input schema's output type and its result its output schema's type, so a
 * handler returning another shape does not compile (results built with lean() carry `Lean<T>`, core/lean.ts).
 * Its `ctx.runtime` has only the services named in `uses`, so a handler touching another does not compile
 * either. The services are taken from `uses` alone (NoInfer), and `handler` is a property, not a method, so
 * that its context is checked strictly: a handler that declares a wider context than `uses` gives is refused.
 */
export interface ToolDef<
  I extends z.ZodObject = z.ZodObject,
  O extends z.ZodObject = z.ZodObject,
  U extends ServiceName = ServiceName,
> {
  name: string;
  title: string;
  description: string;
  /** The services the handler uses (ToolServices' member names). */
  uses: readonly U[];
  input: I;
  /** Success shape, without `ok`. */
  output: O;
  annotations: ToolAnnotations;
  /** The tool's `_meta` in tools/list (an app-only tool's `ui.visibility`). */
  meta?: Readonly<Record<string, unknown>>;
  /** `workspace`: the tool acts on one workspace; with project roots it takes an optional `workspace` id. */
  scope?: 'workspace';
  handler: (
    args: z.output<I>,
    ctx: ToolContext<NoInfer<U>>,
  ) => Promise<ToolOutcome<z.output<O>>> | ToolOutcome<z.output<O>>;
}

/**
 * Any tool, with its argument and result types hidden (tools/registry.ts erases each ToolDef into one): what the
 * registry's heterogeneous list and the catalog hold. `call` checks the raw arguments against the strict input
 * schema (INVALID_ARGUMENT) and runs the handler on what the check returned.
 */
export interface AnyToolDef {
  readonly name: string;
  readonly title: string;
  readonly description: string;
  readonly input: z.ZodObject;
  readonly output: z.ZodObject;
  readonly annotations: ToolAnnotations;
  readonly meta?: Readonly<Record<string, unknown>>;
  readonly scope?: 'workspace' | undefined;
  /** The services the tool declared; `call` hands its handler those alone. */
  readonly uses: readonly ServiceName[];
  call(raw: unknown, ctx: ToolContext): Promise<ToolOutcome>;
}

/** A tool definition, its services `U` taken from `uses` (none when it names none). */
export function defineTool<I extends z.ZodObject, O extends z.ZodObject, const U extends ServiceName = never>(
  def: ToolDef<I, O, U>,
): ToolDef<I, O, U> {
  return def;
}

/** Annotations for the read-only tools (the common case). */
export const READ_ONLY: ToolAnnotations = {
  readOnlyHint: true,
  destructiveHint: false,
  idempotentHint: true,
  openWorldHint: false,
};
