// The tools of tools/list in docs/tools.md's order, as written down once for the tests that compare a served
// catalog with it (test/golden/tools-list.test.ts, test/workspaces/workspaces-catalog.test.ts). Written out, not
// read from the registry, so that a tool moved or added there fails these tests until this list says so too.
export const CONTRACT_ORDER: readonly string[] = [
  'server_info',
  'check_exec_environment',
  'read_file',
  'list_dir',
  'list_files',
  'search_text',
  'apply_patch',
  'edit_file',
  'exec_command',
  'write_stdin',
  'kill_command',
  'read_output',
  'git_status',
  'git_diff',
  'git_log',
  'git_show',
  'git_blame',
  'show_changes',
  'request_permissions',
  'view_image',
];
