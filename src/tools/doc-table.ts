// The tool table of docs/tools.md, generated from the catalog's summaries like the configuration table is from
// the config schema (scripts/update-docs.mjs writes it; test/project/docs.test.ts keeps it in sync): each tool's name,
// title, the first sentence of its description and its real annotations (the hints tools/list states), in
// tools/list order.
import { ALL_TOOL_ERROR_CODES, errorFacts } from '../core/tool-error.js';
import type { ToolSummary } from './catalog.js';

/** The description up to its first sentence end (a stop before a capital or the line's end; not "e.g."). */
function firstSentence(description: string): string {
  const line = description.split('\n')[0]?.trim() ?? '';
  const m = /^(.*?[.!?])(?=\s+[A-Z"`(]|$)/.exec(line);
  return (m ? m[1] : line) as string;
}

/** The hints as tools/list states them (tools/catalog.ts): all three always, idempotent where a writer has it. */
function annotations(a: ToolSummary['annotations']): string {
  const parts = [
    a.readOnlyHint ? 'read-only' : 'writes',
    a.destructiveHint ? 'destructive' : 'not destructive',
  ];
  if (!a.readOnlyHint && a.idempotentHint) parts.push('idempotent');
  parts.push(a.openWorldHint ? 'open world' : 'closed world');
  return parts.join(', ');
}

const cell = (s: string) => s.replace(/\|/g, '\\|');

export function toolTableMarkdown(summaries: readonly ToolSummary[]): string {
  const rows = summaries.map(
    (t) =>
      `| \`${t.name}\` | ${cell(t.title)} | ${cell(firstSentence(t.description))} | ${annotations(t.annotations)} |`,
  );
  return ['| Tool | Title | What it does | Annotations |', '|---|---|---|---|', ...rows].join('\n');
}

/** The error table of docs/tools.md: every ToolErrorCode, its category, whether to retry and the next step. */
export function errorTableMarkdown(): string {
  const rows = [...ALL_TOOL_ERROR_CODES].sort().map((code) => {
    const f = errorFacts(code);
    return `| \`${code}\` | ${f.category} | ${f.retryable ? 'yes' : 'no'} | ${cell(f.next)} |`;
  });
  return ['| Code | Category | Retryable | What to do next |', '|---|---|---|---|', ...rows].join('\n');
}
