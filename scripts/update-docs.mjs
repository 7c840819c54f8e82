// Regenerates the generated tables of the documentation: the configuration table of docs/configuration.md from
// the config schema (src/config/schema.ts, through `--print-config-table`) and the tool table of docs/tools.md
// from the catalog (src/tools/doc-table.ts), each between its markers. Run after `npm run build`:
// `npm run docs:generate`. test/project/docs.test.ts fails when either is out of date.
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const dist = path.join(repo, 'dist');

function replaceBetween(file, marker, table) {
  const p = path.join(repo, file);
  const text = readFileSync(p, 'utf8');
  const re = new RegExp(`(<!-- ${marker}:start -->)[\\s\\S]*?(<!-- ${marker}:end -->)`);
  if (!re.test(text)) throw new Error(`${file} has no ${marker} markers`);
  writeFileSync(p, text.replace(re, `$1\n${table}\n$2`));
  console.log(`${file}: ${marker} updated`);
}

const config = execFileSync(process.execPath, [path.join(dist, 'cli/main.js'), '--print-config-table'], {
  encoding: 'utf8',
}).trim();
replaceBetween('docs/configuration.md', 'config-table', config);

const { toolSummaries } = await import(pathToFileURL(path.join(dist, 'tools/registry.js')).href);
const { toolTableMarkdown, errorTableMarkdown } = await import(
  pathToFileURL(path.join(dist, 'tools/doc-table.js')).href
);
replaceBetween('docs/tools.md', 'tool-table', toolTableMarkdown(toolSummaries()));
replaceBetween('docs/tools.md', 'error-table', errorTableMarkdown());
