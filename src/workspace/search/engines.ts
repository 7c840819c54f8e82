// Which engine serves search_text: ripgrep from @vscode/ripgrep, else `rg` on the server's PATH, else the JS
// engine. Chosen once, lazily, from what is installed and never from what a search found, so `engine` says
// nothing about file contents; both engines return the same pages (test/tools/search.test.ts). The engines (and
// the glob and ignore packages they use) are loaded on the first search, not when the server starts.
import { accessSync, constants } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import type { WorkspaceRoot } from '../paths.js';
import type { SearchOutcome, SearchRequest } from './types.js';
import type { ToolJail } from '../../process/jail/jail.js';
import type { Clock } from '../../core/clock.js';
import { treeIsSmall, TreeSizes, type TreeBase } from './tree-size.js';

export type EngineChoice = { kind: 'ripgrep'; path: string; source: 'bundled' | 'PATH' } | { kind: 'js' };

function executable(p: string): boolean {
  try {
    accessSync(p, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

export function findRipgrep(env: Record<string, string>): EngineChoice {
  try {
    const req = createRequire(import.meta.url);
    const bin = req.resolve(
      `@vscode/ripgrep-${process.platform}-${process.arch}/bin/${process.platform === 'win32' ? 'rg.exe' : 'rg'}`,
    );
    if (executable(bin)) return { kind: 'ripgrep', path: bin, source: 'bundled' };
  } catch {
    // the platform package is absent: fall through
  }
  for (const dir of (env.PATH ?? '').split(path.delimiter)) {
    if (!dir) continue;
    const bin = path.join(dir, 'rg');
    if (executable(bin)) return { kind: 'ripgrep', path: bin, source: 'PATH' };
  }
  return { kind: 'js' };
}

/** ripgrep's side of the search, loaded once (the second search does not wait on two imports). */
async function ripgrepCode() {
  const [{ searchRipgrep }, { verifiedPage }] = await Promise.all([
    import('./ripgrep.js'),
    import('./verify.js'),
  ]);
  return { searchRipgrep, verifiedPage };
}

/** When a search base's size is counted (tree-size.ts): the server's clock, and after the answers (core/quiet.ts). */
export interface SizeCounting {
  clock: Pick<Clock, 'monotonic'>;
  defer: (fn: () => void) => void;
}

export class SearchEngines {
  private choice: EngineChoice | undefined;
  private rg: Awaited<ReturnType<typeof ripgrepCode>> | undefined;
  private readonly childEnv: Record<string, string>;
  /** How big each searched directory was last counted: a small one is searched with one thread. */
  private readonly sizes: TreeSizes<RootedBase> | undefined;
  /**
   * `jail`: where ripgrep runs (process/jail/jail.ts); without one it runs as the server's own child.
   * `counting`: without it every search runs with rg's default threads.
   */
  constructor(
    private readonly env: Record<string, string>,
    private readonly jail?: ToolJail,
    counting?: SizeCounting,
  ) {
    this.childEnv = { PATH: env.PATH ?? '/usr/bin:/bin', LANG: env.LANG ?? 'C.UTF-8' };
    this.sizes = counting && new TreeSizes(counting.clock, counting.defer, (b) => treeIsSmall(b.root, b));
  }

  engine(): EngineChoice {
    this.choice ??= findRipgrep(this.env);
    return this.choice;
  }

  /**
   * Both engines' code, loaded now: the server loads no code of its own after its first tool call
   * (tools/lazy-catalog.ts), since a command may by then have rewritten its files.
   */
  static async loadCode(): Promise<void> {
    await Promise.all([import('./js-engine.js'), import('./ripgrep.js'), import('./verify.js')]);
  }

  /** For tests and `server_info`: pin the engine. */
  use(choice: EngineChoice): void {
    this.choice = choice;
  }

  /**
   * ripgrep when present, else the JS engine. Where rg saw nothing but the workspace (a jail of its own, jail.ts
   * wrapAlone), its page is the answer; elsewhere only the matches whose lines re-read the same inside the
   * workspace are kept (verify.ts): a match that does not hold is dropped, never answered otherwise.
   */
  async search(root: WorkspaceRoot, req: SearchRequest): Promise<SearchOutcome> {
    const e = this.engine();
    if (e.kind !== 'ripgrep') {
      const { searchJs } = await import('./js-engine.js');
      return (await searchJs(root, req)).outcome;
    }
    const { searchRipgrep, verifiedPage } = (this.rg ??= await ripgrepCode());
    const { page, outcome } = await searchRipgrep(
      e.path,
      root,
      req,
      this.childEnv,
      this.jail,
      this.threadsFor(root, req),
    );
    const kept = verifiedPage(root, page, !this.jail?.runsAlone(e.path));
    if (kept.length === page.length) return outcome;
    return { ...outcome, matches: kept.map((c) => c.match) };
  }

  /**
   * How many threads rg searches `req`'s base with: one where the base was last counted small (tree-size.ts),
   * else rg's default (undefined); asks for a count when there is none or it is old.
   */
  threadsFor(root: WorkspaceRoot, req: SearchRequest): 1 | undefined {
    return !req.baseIsFile && this.sizes?.small(baseOf(root, req)) === true ? 1 : undefined;
  }

  /** At start, before any call: the workspace root's size counted, for its first search (tree-size.ts). */
  async warm(root: WorkspaceRoot): Promise<void> {
    if (this.engine().kind !== 'ripgrep' || !this.sizes) return;
    const base = { baseAbs: root.lexical, baseReal: root.real, baseRel: '.' };
    await this.sizes.countNow(baseOf(root, { ...base, includeHidden: false, includeIgnored: false }));
  }
}

type RootedBase = TreeBase & { root: WorkspaceRoot };

function baseOf(
  root: WorkspaceRoot,
  req: Pick<SearchRequest, 'baseAbs' | 'baseReal' | 'baseRel' | 'includeHidden' | 'includeIgnored'>,
): RootedBase {
  return {
    root,
    abs: req.baseAbs,
    real: req.baseReal,
    rel: req.baseRel,
    includeHidden: req.includeHidden,
    includeIgnored: req.includeIgnored,
  };
}
