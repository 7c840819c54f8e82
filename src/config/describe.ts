// The settings of schema.ts in words for people: what a kind accepts (--help, errors) and the configuration
// table of docs/configuration.md.
import { ENTRIES, PREFIX, type Kind } from './schema.js';

export function describeKind(k: Kind): string {
  switch (k.type) {
    case 'int':
      return `an integer from ${k.min} to ${k.max}`;
    case 'bool':
      return '1, 0, true or false';
    case 'enum':
      return k.values.join(', ');
    case 'list':
      return 'a comma-separated list';
    case 'hex':
      return `hex-encoded bytes (at least ${k.minBytes})`;
    case 'url':
      return 'an absolute http(s) URL';
    case 'path':
      return 'a path';
    default:
      return 'a string';
  }
}

/** The configuration table of docs/configuration.md, generated from ENTRIES. */
export function configTableMarkdown(): string {
  const rows = ENTRIES.map((e) => {
    const def = e.defaultDoc ?? (e.default === undefined ? 'unset' : `\`${String(e.default)}\``);
    const flag = e.flag ? `\`${e.flag}\`` : '— (secret: env or file only)';
    return `| \`${PREFIX}${e.env}\` | ${flag} | ${e.accepts ?? describeKind(e.kind)} | ${def} | ${e.doc} |`;
  });
  return ['| Variable | Flag | Accepts | Default | Meaning |', '|---|---|---|---|---|', ...rows].join('\n');
}
