// Lean results (docs/tools.md#what-the-model-reads): a result leaves out every field at its default value, so
// a model reads only what carries information. Shared by the tools and the search pager.

/** Kept even at a default value (docs/design-notes.md#lean-results): `ok`, `status`, `command_id`, and `exit_code` once it is a number. */
const ALWAYS = new Set(['ok', 'status', 'command_id', 'exit_code']);

function isDefault(v: unknown): boolean {
  if (v === undefined || v === null || v === false || v === 0 || v === '') return true;
  if (Array.isArray(v)) return v.length === 0;
  return typeof v === 'object' && Object.keys(v as object).length === 0;
}

/**
 * A result without what carries no information (docs/design-notes.md#lean-results): every field at its
 * default value — undefined, null, false, 0, '', an empty array or object — is left out, at any depth (nested
 * objects and the objects in arrays), except the ALWAYS fields (left out only when null) and the field names
 * in `keep`. `next_action` is copied as is: its arguments are a call to send back verbatim, where `false` is
 * not always the default. Output schemas declare every field this may drop with `.optional()`.
 */
export function lean<T>(value: T, keep: readonly string[] = []): T {
  if (Array.isArray(value)) return value.map((v) => lean(v, keep)) as T;
  if (!value || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  for (const [k, raw] of Object.entries(value as Record<string, unknown>)) {
    if (k === 'next_action') {
      if (raw !== undefined) out[k] = raw;
      continue;
    }
    const v = lean(raw, keep);
    const kept = ALWAYS.has(k) || keep.includes(k) ? v !== undefined && v !== null : !isDefault(v);
    if (kept) out[k] = v;
  }
  return out as T;
}
