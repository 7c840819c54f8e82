// The parsed settings' type, read from the table of schema.ts (one source), and the run-time proof that parsed
// values have it (load.ts builds its Config on it).
import { ENTRIES, type Entry, type TABLE } from './schema.js';

type TableEntry = (typeof TABLE)[number];

/** The value a setting of kind K holds once parsed (load.ts parseValue). */
type ValueOf<K> = K extends { type: 'int' }
  ? number
  : K extends { type: 'bool' }
    ? boolean
    : K extends { type: 'enum'; values: readonly (infer V)[] }
      ? V
      : K extends { type: 'list' }
        ? readonly string[]
        : string;

/** A setting always has a value when it has a default or is a list (empty by default). */
type Present<E extends TableEntry> = E['default'] extends undefined
  ? E['kind'] extends { type: 'list' }
    ? true
    : false
  : true;

/**
 * Every setting of the table, by key, with the type its kind parses to: what load.ts reads from flags and the
 * environment before the values it computes (config/load.ts `Config`). One source: this table.
 */
export type Settings = {
  [E in TableEntry as Present<E> extends true ? E['key'] : never]: ValueOf<E['kind']>;
} & {
  [E in TableEntry as Present<E> extends true ? never : E['key']]?: ValueOf<E['kind']>;
};

/** Whether `v` is what entry `e` parses to (a parsed value always is; this is the run-time proof of the type). */
function holds(e: Entry, v: unknown): boolean {
  if (v === undefined) return e.default === undefined && e.kind.type !== 'list';
  switch (e.kind.type) {
    case 'int':
      return typeof v === 'number';
    case 'bool':
      return typeof v === 'boolean';
    case 'enum':
      return typeof v === 'string' && e.kind.values.includes(v);
    case 'list':
      return Array.isArray(v) && v.every((x) => typeof x === 'string');
    default:
      return typeof v === 'string';
  }
}

/** Every entry's value in `values` has its entry's type. */
export function isSettings(values: Record<string, unknown>): values is Record<string, unknown> & Settings {
  return ENTRIES.every((e) => holds(e, values[e.key]));
}
