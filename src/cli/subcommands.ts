// The subcommands `tunnel`, `doctor`, `token` and `console` (docs/remote-access.md, docs/configuration.md): main.ts hands
// argv and the environment here before anything else, as it hands them to config/ (the only reader of SERVICE_*
// settings, which every subcommand goes through). Returns the exit code, or undefined when argv names no
// subcommand. Each is loaded only when named, so serving does not load them.

export async function runSubcommand(
  argv: readonly string[],
  env: Record<string, string | undefined>,
  cwd: string,
): Promise<number | undefined> {
  const io = {
    out: (s: string) => void process.stdout.write(s),
    err: (s: string) => void process.stderr.write(s),
    isTTY: process.stdout.isTTY === true,
  };
  if (argv[0] === 'tunnel') return (await import('./tunnel/run.js')).runTunnel(argv.slice(1), env, cwd, io);
  if (argv[0] === 'doctor') return (await import('./doctor.js')).runDoctor(argv.slice(1), env, cwd, io);
  if (argv[0] === 'token') return (await import('./token.js')).runToken(argv.slice(1), env, cwd, io);
  if (argv[0] === 'console')
    return (await import('./console-link.js')).runConsoleLink(argv.slice(1), env, cwd, io);
  return undefined;
}
