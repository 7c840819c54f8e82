// The command policy as a classifier (docs/tools.md#permission-modes;
// docs/design-notes.md#command-arguments): a table of command lines and the verdict each gets in safe mode.
// Pure: nothing runs.
import { describe, expect, it } from 'vitest';
import { classifyCommand, type PolicyContext } from '../../src/policy/classify.js';
import { lex } from '../../src/policy/shell-words.js';

const ctx = (over: Partial<PolicyContext> = {}): PolicyContext => ({
  mode: 'safe',
  cwd: '/work/ws',
  writableRoots: ['/work/ws', '/rt/123'],
  home: '/rt/123/home',
  networkIsolated: false,
  ...over,
});

const kind = (cmd: string, over?: Partial<PolicyContext>) => {
  const v = classifyCommand(cmd, ctx(over));
  return v.ok ? 'ok' : v.kind;
};

describe('destructive commands are refused in safe and trusted', () => {
  it.each([
    'rm -rf build',
    'rm -fr build',
    'rm -r -f build',
    'rm --recursive --force build',
    'ls && rm -rf dist',
    'echo $(rm -rf x)',
    'bash -c "rm -rf x"',
    "sh -lc 'git reset --hard'",
    'FOO=1 sudo ls',
    'env -i rm -rf x',
    'nice -n 5 rm -rf x',
    'timeout 5 git clean -fd',
    'find . -name x | xargs rm -rf',
    'git -C sub reset --hard HEAD',
    'git clean -xdf',
    'git push --force origin main',
    'git push origin +main',
    'git branch -D topic',
    'git checkout -f main',
    'git stash clear',
    'mkfs.ext4 /dev/sdb1',
    'dd if=/dev/zero of=/dev/sda',
    'shutdown -h now',
    'kill -9 -1',
    'kill -- -1',
    'kill -s KILL -1',
    'if true; then rm -rf x; fi',
  ])('%j', (cmd) => {
    expect(kind(cmd)).toBe('destructive');
    expect(kind(cmd, { mode: 'trusted' })).toBe('destructive');
    expect(kind(cmd, { mode: 'dangerous' })).toBe('ok');
  });
});

describe('mass deletion without the words rm -rf is refused like rm -rf', () => {
  it.each([
    'find . -delete',
    'find src -delete',
    "find . -name '*.o' -delete",
    'find . -type f -exec rm {} \\;',
    'find . -exec rm -f {} +',
    'find . -execdir rm {} \\;',
    'find . -ok rm {} \\;',
    'find . -okdir /bin/rm {} \\;',
    'find . -exec sh -c \'rm -rf "$1"\' _ {} \\;',
    'find . -name x | xargs rm',
    'find . -print0 | xargs -0 rm -f',
    'python3 -c "import shutil; shutil.rmtree(\'src\')"',
    'python -c "from shutil import rmtree; rmtree(\'src\')"',
    'python3 -c "import os; os.system(\'rm -rf src\')"',
    "python3 -c \"import subprocess; subprocess.run(['rm', '-rf', 'src'])\"",
    'perl -MFile::Path=rmtree -e \'rmtree("src")\'',
    'perl -e \'use File::Path qw(remove_tree); remove_tree("src")\'',
    'ruby -rfileutils -e \'FileUtils.rm_rf("src")\'',
    "node -e \"require('fs').rmSync('src', { recursive: true, force: true })\"",
    'node --eval "fs.rmdirSync(\'src\', {recursive: true})"',
    "node -e \"require('fs').promises.rm('src', { recursive: true })\"",
    'deno eval "await Deno.remove(\'src\', { recursive: true })"',
    'bash -c "find . -delete"',
  ])('%j', (cmd) => {
    expect(kind(cmd)).toBe('destructive');
    expect(kind(cmd, { mode: 'trusted' })).toBe('destructive');
    expect(kind(cmd, { mode: 'dangerous' })).toBe('ok');
  });

  it.each([
    "find . -name '*.ts' -print",
    'find . -type f -exec grep -l TODO {} +',
    'find . -execdir wc -l {} \\;',
    'find . -newer x -ls',
    'find . | xargs grep foo',
    'python3 -c "print(1)"',
    'python3 script.py --rmtree',
    "node -e \"require('fs').rmSync('one-file.txt')\"",
    'perl -ne "print if /rmtree/" notes.txt',
    'ruby -e "puts 1"',
  ])('%j is allowed', (cmd) => {
    expect(kind(cmd)).toBe('ok');
  });

  it('the refusal says what the command would do', () => {
    const v = classifyCommand('find . -delete', ctx());
    expect(v).toMatchObject({ ok: false, needs: 'dangerous' });
    expect(v.ok ? '' : v.reason).toMatch(/-delete` deletes every file it matches/);
  });
});

describe('writes aimed outside the workspace are refused; reads anywhere are fine (docs/design-notes.md#command-arguments)', () => {
  it.each([
    'echo x > /etc/passwd',
    'echo x >> ../outside.txt',
    'cat a 2> /var/log/x',
    'cp a.txt /usr/local/bin/',
    'cp -t /opt a.txt',
    'mv a.txt ~other/x',
    'mv /etc/hosts a.txt',
    'rm ../sibling.txt',
    'chmod 777 /etc/shadow',
    'chown -R me /srv',
    'touch /x',
    'mkdir -p /opt/thing',
    'ln -s a.txt /usr/bin/a',
    'tee /etc/motd',
    'sed -i s/a/b/ /etc/hosts',
    'dd if=a.txt of=/boot/x',
    'cd /etc && touch x',
    'cd .. && rm f',
    'echo x > "/etc/$name"',
    'rm /*',
  ])('%j', (cmd) => {
    expect(kind(cmd)).toBe('outside_write');
  });

  it.each([
    'cat /etc/os-release',
    'ls /usr/lib > listing.txt',
    'grep -r foo /usr/include | head',
    'echo x > out.txt',
    'echo x > ./sub/../out.txt',
    'echo x 2>&1 >/dev/null',
    'cmd > /dev/stderr',
    'cp /etc/hosts .',
    'cp a b',
    'rm build/out.txt',
    'echo hi > "$TMPDIR/x"',
    'echo hi > ${HOME}/x',
    'touch ~/x',
    'echo x > $SOMEWHERE/x',
    'mkdir -p /rt/123/tmp/x',
    'cat <<EOF\nrm -rf /\nEOF\necho done',
    "echo 'rm -rf /'",
    'git status && git diff',
    'command -v rm',
    'sed s/a/b/ /etc/hosts',
    'kill -1 1234',
    'kill -TERM 42',
  ])('%j is allowed', (cmd) => {
    expect(kind(cmd)).toBe('ok');
  });

  it('with a sandbox, /tmp counts as writable when the caller says so', () => {
    expect(kind('echo x > /tmp/x')).toBe('outside_write');
    expect(kind('echo x > /tmp/x', { writableRoots: ['/work/ws', '/tmp'] })).toBe('ok');
  });
});

describe('network commands in safe mode without a kernel sandbox', () => {
  it.each([
    'curl https://x',
    'wget x',
    'npm install',
    'npm i left-pad',
    'pip install requests',
    'python3 -m pip install x',
    'git clone https://x',
    'git fetch',
    'cargo install ripgrep',
    'ssh host',
    'npx create-thing',
  ])('%j is refused in safe without a sandbox, allowed with one and in trusted', (cmd) => {
    expect(kind(cmd)).toBe('network');
    expect(kind(cmd, { networkIsolated: true })).toBe('ok');
    expect(kind(cmd, { mode: 'trusted' })).toBe('ok');
  });

  it.each(['npm test', 'npm run build', 'git log', 'cargo build', 'pip list', 'go test ./...'])(
    '%j is not a network command',
    (cmd) => {
      expect(kind(cmd)).toBe('ok');
    },
  );
});

describe('the lexer', () => {
  it('splits commands, keeps quoted text whole, finds redirections and nested commands', () => {
    const p = lex(`a "b c" 'd e' f\\ g > out 2>&1 | h; i $(j k) \`l\``);
    expect(p.commands.map((c) => c.words.map((w) => w.text))).toEqual([
      ['a', 'b c', 'd e', 'f g'],
      ['h'],
      ['i', '$(j k)', '`l`'],
    ]);
    expect(p.commands[0]?.redirects).toEqual([{ op: '>', target: { text: 'out', dynamic: false } }]);
    expect(p.nested).toEqual(['j k', 'l']);
  });
});
