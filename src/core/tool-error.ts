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
  | 'RUNTIME_DIR_UNWRITABLE'
  | 'SANDBOX_UNAVAILABLE'
  | 'SYMLINK_ESCAPE'
  | 'TTY_UNSUPPORTED'
  | 'UNSUPPORTED_ENCODING';

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
  RUNTIME_DIR_UNWRITABLE: 'runtime',
  SANDBOX_UNAVAILABLE: 'runtime',
  SYMLINK_ESCAPE: 'security',
  TTY_UNSUPPORTED: 'runtime',
  UNSUPPORTED_ENCODING: 'validation',
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
