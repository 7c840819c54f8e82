// Regenerates the configuration table in README.md from the config schema (src/config/schema.ts), between
// the config-table markers. Run after `npm run build`: `npm run docs:config`.
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const table = execFileSync(process.execPath, [path.join(repo, 'dist/cli/main.js'), '--print-config-table'], {
  encoding: 'utf8',
}).trim();
const readmePath = path.join(repo, 'README.md');
const readme = readFileSync(readmePath, 'utf8');
const re = /(<!-- config-table:start -->)[\s\S]*?(<!-- config-table:end -->)/;
if (!re.test(readme)) throw new Error('README.md has no config-table markers');
writeFileSync(readmePath, readme.replace(re, `$1\n${table}\n$2`));
console.log('README.md configuration table updated');
