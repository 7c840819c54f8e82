// Lean results (docs/tools.md#what-the-model-reads): a result leaves out every field at its default value, so
// a model reads only what carries information. Shared by the tools and the search pager. `Lean<T>` is what
// lean() returns, as a type: a field that may hold a default value is optional, so a handler's result type
// says what the run time sends (tools/define.ts checks it against the tool's output schema).

/** Kept even at a default value (docs/design-notes.md#lean-results): `ok`, `status`, `command_id`, and `exit_code` once it is a number. */
const ALWAYS = new Set(['ok', 'status', 'command_id', 'exit_code']);
type AlwaysKept = 'ok' | 'status' | 'command_id' | 'exit_code';

/** The scalar values lean() leaves out of a field that is not kept. */
type DefaultScalar = undefined | null | false | 0 | '';

/** Whether a field holding a V may be left out: a default scalar, any array, or an object all of whose fields may go. */
type MayBeDefault<V> = undefined extends V
  ? true
  : null extends V
    ? true
    : false extends V
      ? true
      : 0 extends V
        ? true
        : '' extends V
          ? true
          : true extends EmptyableMember<V>
            ? true
            : false;
type EmptyableMember<V> = V extends readonly unknown[]
  ? true
  : V extends object
    ? Record<string, never> extends LeanObject<V, never>
      ? true
      : false
    : false;

/** Whether field `F` of `T` is optional in the lean result. */
type Optional<T, F extends keyof T, K> = F extends 'next_action'
  ? undefined extends T[F]
    ? true
    : false
  : F extends AlwaysKept | K
    ? undefined extends T[F]
      ? true
      : null extends T[F]
        ? true
        : false
    : MayBeDefault<T[F]>;

/** The value of field `F` of `T` when the lean result has it. */
type FieldValue<T, F extends keyof T, K> = F extends 'next_action'
  ? Exclude<T[F], undefined>
  : F extends AlwaysKept | K
    ? Lean<Exclude<T[F], null | undefined>, K>
    : Exclude<Lean<T[F], K>, DefaultScalar>;

/** An index signature (a record's keys) says nothing of which keys are present: it stays as it is. */
type LeanObject<T, K> = {
  [F in keyof T as string extends F ? F : Optional<T, F, K> extends true ? never : F]: FieldValue<T, F, K>;
} & {
  [F in keyof T as string extends F ? never : Optional<T, F, K> extends true ? F : never]?: FieldValue<
    T,
    F,
    K
  >;
};

/** What lean(value, keep) returns for a T (`K`: the names in `keep`). */
export type Lean<T, K = never> = T extends readonly (infer E)[]
  ? Lean<E, K>[]
  : T extends object
    ? { [F in keyof LeanObject<T, K>]: LeanObject<T, K>[F] }
    : T;

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
export function lean<T, K extends string = never>(value: T, keep?: readonly K[]): Lean<T, K>;
export function lean(value: unknown, keep: readonly string[] = []): unknown {
  if (Array.isArray(value)) return value.map((v: unknown) => lean(v, keep));
  if (!value || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  for (const [k, raw] of Object.entries(value)) {
    if (k === 'next_action') {
      if (raw !== undefined) out[k] = raw;
      continue;
    }
    const v = lean(raw, keep);
    const kept = ALWAYS.has(k) || keep.includes(k) ? v !== undefined && v !== null : !isDefault(v);
    if (kept) out[k] = v;
  }
  return out;
}
