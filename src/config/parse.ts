// Reading one setting's text (config/schema.ts says its kind) and the command line's flags into text per
// setting, for config/load.ts, the only reader of process.env and argv. Errors are ConfigError: the one line
// the CLI prints before exiting 2.
import { describeKind } from './describe.js';
import { ENTRIES, PREFIX, type Entry } from './schema.js';

export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConfigError';
  }
}

const BOOL_TRUE = new Set(['1', 'true']);
const BOOL_FALSE = new Set(['0', 'false']);

export function parseValue(e: Entry, raw: string, source: string): unknown {
  const bad = () => new ConfigError(`${source} must be ${describeKind(e.kind)} (got ${JSON.stringify(raw)})`);
  const k = e.kind;
  switch (k.type) {
    case 'int': {
      if (!/^\d+$/.test(raw.trim())) throw bad();
      const n = Number(raw.trim());
      if (n < k.min || n > k.max) throw bad();
      return n;
    }
    case 'bool': {
      const v = raw.trim().toLowerCase();
      if (BOOL_TRUE.has(v)) return true;
      if (BOOL_FALSE.has(v)) return false;
      throw bad();
    }
    case 'enum':
      if (!k.values.includes(raw.trim())) throw bad();
      return raw.trim();
    case 'list':
      return raw
        .split(/[,\n]/)
        .map((s) => s.trim())
        .filter(Boolean);
    case 'hex': {
      const v = raw.trim();
      if (!/^(?:[0-9a-fA-F]{2})+$/.test(v) || v.length / 2 < k.minBytes) {
        throw new ConfigError(`${source} must be ${describeKind(k)} (got ${(v.length / 2) | 0} bytes)`);
      }
      return v.toLowerCase();
    }
    case 'url': {
      let u: URL;
      try {
        u = new URL(raw.trim());
      } catch {
        throw bad();
      }
      if (u.protocol !== 'https:' && u.protocol !== 'http:') throw bad();
      return u.origin + u.pathname.replace(/\/+$/, '');
    }
    default:
      if (raw.length === 0) throw new ConfigError(`${source} must not be empty`);
      return raw;
  }
}

/** `--name value`, `--name=value`; a bare boolean flag means true. */
export function parseArgv(argv: readonly string[]): {
  flags: Map<string, string>;
  stdio: boolean;
  words: string[];
} {
  const flags = new Map<string, string>();
  const words: string[] = [];
  let stdio = false;
  const byFlag = new Map(ENTRIES.filter((e) => e.flag).map((e) => [e.flag as string, e]));
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i] as string;
    if (!a.startsWith('--')) {
      words.push(a);
      continue;
    }
    const eq = a.indexOf('=');
    const name = eq >= 0 ? a.slice(0, eq) : a;
    if (name === '--stdio') {
      stdio = eq >= 0 ? BOOL_TRUE.has(a.slice(eq + 1)) : true;
      continue;
    }
    if (name === '--help' || name === '--version' || name === '--print-config-table') {
      flags.set(name, '1');
      continue;
    }
    const entry = byFlag.get(name);
    if (!entry) {
      const secret = ENTRIES.find((e) => e.secret && name === '--' + e.env.toLowerCase().replace(/_/g, '-'));
      if (secret) {
        throw new ConfigError(
          `${name} is not accepted on the command line (argv is visible to other users); set ${PREFIX}${secret.env} in the environment instead`,
        );
      }
      throw new ConfigError(`unknown option ${name} (see --help)`);
    }
    if (eq >= 0) setFlag(flags, name, a.slice(eq + 1));
    else if (
      entry.kind.type === 'bool' &&
      (argv[i + 1] === undefined ||
        (argv[i + 1] as string).startsWith('--') ||
        !/^(1|0|true|false)$/i.test(argv[i + 1] as string))
    )
      flags.set(name, '1');
    else {
      const v = argv[i + 1];
      if (v === undefined) throw new ConfigError(`${name} needs a value (${describeKind(entry.kind)})`);
      setFlag(flags, name, v);
      i++;
    }
  }
  return { flags, stdio, words };
}

/** The one repeatable flag, `--projects`, joins its values with `:` (SERVICE_PROJECTS's separator). */
const REPEATABLE = new Set(['--projects']);

function setFlag(flags: Map<string, string>, name: string, value: string): void {
  const before = flags.get(name);
  flags.set(name, REPEATABLE.has(name) && before !== undefined ? `${before}:${value}` : value);
}
