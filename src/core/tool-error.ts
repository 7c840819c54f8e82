// The closed family of tool failures (docs/tools.md#results-and-errors). Anything thrown inside a tool that
// is not a ToolError is a bug and becomes INTERNAL_ERROR in tools/result. Category and retryability are
// derived from the code in one table (docs/design-notes.md#retryable), never chosen at the throw site.

export type ToolErrorCode =
  | 'ABSOLUTE_PATH_DENIED'
  | 'APPROVAL_PENDING'
  | 'BINARY_FILE'
  | 'COMMAND_CLOSED'
  | 'COMMAND_LIMIT_REACHED'
  | 'COMMAND_NOT_FOUND'
  | 'EDIT_AMBIGUOUS'
  | 'EDIT_NOT_FOUND'
  | 'ELICITATION_UNSUPPORTED'
  | 'GIT_ERROR'
  | 'INTERNAL_ERROR'
  | 'INVALID_ARGUMENT'
  | 'IS_DIRECTORY'
  | 'NOT_A_DIRECTORY'
  | 'NOT_FOUND'
  | 'OUTPUT_TOO_LARGE'
  | 'PATCH_ALREADY_APPLIED'
  | 'PATCH_CONFLICT'
  | 'PATCH_CONTEXT_AMBIGUOUS'
  | 'PATCH_CONTEXT_NOT_FOUND'
  | 'PATCH_FAILED'
  | 'PATCH_HUNKS_OVERLAP'
  | 'PATCH_ROLLBACK_FAILED'
  | 'PATH_OUTSIDE_WORKSPACE'
  | 'PERMISSION_DENIED'
  | 'PERMISSION_REQUIRED'
  | 'REVIEW_POINT_UNKNOWN'
  | 'REVIEW_TOO_LARGE'
  | 'RUNTIME_DIR_UNWRITABLE'
  | 'SANDBOX_UNAVAILABLE'
  | 'SYMLINK_ESCAPE'
  | 'TTY_UNSUPPORTED'
  | 'UNSUPPORTED_ENCODING'
  | 'WORKSPACE_LIMIT'
  | 'WORKSPACE_NOT_FOUND'
  | 'WORKSPACE_OUTSIDE_ROOTS'
  | 'WORKSPACE_REQUIRED'
  | 'WORKSPACE_UNMERGED';

export type ErrorCategory =
  'validation' | 'security' | 'permission' | 'runtime' | 'not_found' | 'conflict' | 'internal';

const CATEGORY: Record<ToolErrorCode, ErrorCategory> = {
  ABSOLUTE_PATH_DENIED: 'security',
  APPROVAL_PENDING: 'permission',
  BINARY_FILE: 'validation',
  COMMAND_CLOSED: 'runtime',
  COMMAND_LIMIT_REACHED: 'runtime',
  COMMAND_NOT_FOUND: 'not_found',
  EDIT_AMBIGUOUS: 'conflict',
  EDIT_NOT_FOUND: 'conflict',
  ELICITATION_UNSUPPORTED: 'permission',
  GIT_ERROR: 'runtime',
  INTERNAL_ERROR: 'internal',
  INVALID_ARGUMENT: 'validation',
  IS_DIRECTORY: 'validation',
  NOT_A_DIRECTORY: 'validation',
  NOT_FOUND: 'not_found',
  OUTPUT_TOO_LARGE: 'validation',
  PATCH_ALREADY_APPLIED: 'conflict',
  PATCH_CONFLICT: 'conflict',
  PATCH_CONTEXT_AMBIGUOUS: 'conflict',
  PATCH_CONTEXT_NOT_FOUND: 'conflict',
  PATCH_FAILED: 'runtime',
  PATCH_HUNKS_OVERLAP: 'conflict',
  PATCH_ROLLBACK_FAILED: 'internal',
  PATH_OUTSIDE_WORKSPACE: 'security',
  PERMISSION_DENIED: 'permission',
  PERMISSION_REQUIRED: 'permission',
  REVIEW_POINT_UNKNOWN: 'not_found',
  REVIEW_TOO_LARGE: 'runtime',
  RUNTIME_DIR_UNWRITABLE: 'runtime',
  SANDBOX_UNAVAILABLE: 'runtime',
  SYMLINK_ESCAPE: 'security',
  TTY_UNSUPPORTED: 'runtime',
  UNSUPPORTED_ENCODING: 'validation',
  WORKSPACE_LIMIT: 'runtime',
  WORKSPACE_NOT_FOUND: 'not_found',
  WORKSPACE_OUTSIDE_ROOTS: 'security',
  WORKSPACE_REQUIRED: 'validation',
  WORKSPACE_UNMERGED: 'conflict',
};

/** docs/design-notes.md#retryable: the only retryable codes. */
const RETRYABLE: ReadonlySet<ToolErrorCode> = new Set<ToolErrorCode>([
  // The operator has not decided yet: the same call keeps waiting (docs/console.md#approvals).
  'APPROVAL_PENDING',
  'COMMAND_LIMIT_REACHED',
  // edit_file's text was not found exactly once: the same kind of failure as a patch's context errors.
  'EDIT_AMBIGUOUS',
  'EDIT_NOT_FOUND',
  'PATCH_CONFLICT',
  'PATCH_CONTEXT_NOT_FOUND',
  'PATCH_CONTEXT_AMBIGUOUS',
  'PATCH_HUNKS_OVERLAP',
]);

/**
 * What the model should do next on each code, as docs/tools.md#error-codes shows it (generated from this table by
 * `npm run docs:generate`; test/project/docs.test.ts keeps the two equal). The result's own `Retry:` and
 * `Suggested action:` lines give the exact call for the case at hand; this is the rule behind them.
 */
export const NEXT_STEP: Record<ToolErrorCode, string> = {
  ABSOLUTE_PATH_DENIED:
    'Never returned (absolute paths inside the workspace are accepted); kept for older clients.',
  APPROVAL_PENDING: 'The operator has not decided yet: send the same call again to keep waiting.',
  BINARY_FILE: 'Read it another way: `view_image` for an image, or a command such as `xxd` or `file`.',
  COMMAND_CLOSED:
    'Poll with `write_stdin` and empty `chars`, or start the program again with `tty: true` to type into it.',
  COMMAND_LIMIT_REACHED:
    'Wait for a running command to finish (poll it) or stop one with `kill_command`, then retry.',
  COMMAND_NOT_FOUND:
    'The id is unknown or its output was evicted: start the command again with `exec_command`.',
  EDIT_AMBIGUOUS: 'Add surrounding lines to `old_string` until it matches once, or set `replace_all`.',
  EDIT_NOT_FOUND: 'Read the region the error names with `read_file`, then retry with its exact text.',
  ELICITATION_UNSUPPORTED:
    'This client cannot ask the user: tell the user what to allow, or ask the operator to approve.',
  GIT_ERROR: "Read git's message: fix the ref or path it names, or check that `path` is inside a repository.",
  INTERNAL_ERROR: 'A server bug: retry once; if it repeats, report the message to the operator.',
  INVALID_ARGUMENT: "Fix the argument the message names (the tool's input schema lists the allowed values).",
  IS_DIRECTORY: 'List it with `list_dir`, or name a file inside it.',
  NOT_A_DIRECTORY: 'Name the directory that contains it, or read the file with `read_file`.',
  NOT_FOUND: 'Check the path with `list_dir` or `list_files`; paths are relative to the workspace root.',
  OUTPUT_TOO_LARGE: 'Ask for less: a smaller range, `max_bytes`, or a narrower pattern.',
  PATCH_ALREADY_APPLIED: 'Nothing to do for that hunk: its change is already in the file.',
  PATCH_CONFLICT: 'The file changed since it was read: read it again and rebuild the patch.',
  PATCH_CONTEXT_AMBIGUOUS: 'Add context lines (or an `@@` anchor) until each hunk matches one place.',
  PATCH_CONTEXT_NOT_FOUND:
    'Read the file around the hunk the error names and rebuild the hunk from its exact lines.',
  PATCH_FAILED: 'Read `details` (path, errno): fix the patch or free the resource; nothing was changed.',
  PATCH_HUNKS_OVERLAP: 'Merge the overlapping hunks into one, or send them as separate patches.',
  PATCH_ROLLBACK_FAILED:
    'Stop editing: the message lists the files left changed; tell the user and check them with `git_diff`.',
  PATH_OUTSIDE_WORKSPACE: 'Use a path inside the workspace (`server_info` shows its root).',
  PERMISSION_DENIED: 'The permission mode or the operator refused it: do it another way or ask the user.',
  PERMISSION_REQUIRED: 'Call `request_permissions` with the permission the message names, then retry.',
  REVIEW_POINT_UNKNOWN:
    'Use a point id from an earlier `show_changes` result (they last one server run), or call it without `since`.',
  REVIEW_TOO_LARGE:
    'The workspace has no git and is too large to snapshot: run `git init` there, or serve a narrower workspace.',
  RUNTIME_DIR_UNWRITABLE:
    'The server cannot write its runtime directory: tell the operator (`check_exec_environment` says where).',
  SANDBOX_UNAVAILABLE:
    'Commands cannot run here: call `check_exec_environment` for the reason and tell the operator.',
  SYMLINK_ESCAPE:
    "The path leaves the workspace through a symlink: use the file's real path inside the workspace.",
  TTY_UNSUPPORTED: 'Run it without `tty`; interactive programs then read from the `stdin` argument.',
  UNSUPPORTED_ENCODING: 'Use `encoding: "utf8"`, or read the file with a command (`iconv`, `xxd`).',
  WORKSPACE_LIMIT: 'Close a workspace you no longer need with `close_workspace`, then open this one again.',
  WORKSPACE_NOT_FOUND:
    'The id is unknown or was closed: call `open_workspace` with the directory and use the id it returns.',
  WORKSPACE_OUTSIDE_ROOTS:
    'Name a directory strictly inside a project root (`server_info` lists them), relative to it or absolute.',
  WORKSPACE_REQUIRED:
    'There is no default workspace: call `open_workspace`, then pass its id as `workspace` to this tool.',
  WORKSPACE_UNMERGED:
    'The worktree holds work not in its base: ask the operator to merge or discard it in the console, or close it without `remove`.',
};

/** One row of the error table: the code's category, whether the same call may succeed later, the next step. */
export function errorFacts(code: ToolErrorCode): {
  category: ErrorCategory;
  retryable: boolean;
  next: string;
} {
  return { category: CATEGORY[code], retryable: RETRYABLE.has(code), next: NEXT_STEP[code] };
}

export const ALL_TOOL_ERROR_CODES = Object.keys(CATEGORY) as ToolErrorCode[];

export interface ToolErrorHints {
  /** The exact next call, e.g. `read_file {"path": "src/a.ts"}`. Rendered as a `Retry:` line. */
  retry?: string;
  /** Free advice for the model, rendered as a `Suggested action:` line. */
  suggestion?: string;
}

export class ToolError extends Error {
  readonly category: ErrorCategory;
  readonly retryable: boolean;
  constructor(
    readonly code: ToolErrorCode,
    message: string,
    readonly details: Record<string, unknown> = {},
    readonly hints: ToolErrorHints = {},
  ) {
    super(message);
    this.name = 'ToolError';
    this.category = CATEGORY[code];
    this.retryable = RETRYABLE.has(code);
  }
}
