// Container files checked statically (docs/design-notes.md#tests: no Docker engine or cluster here, and
// this check never skips): the Dockerfile runs as a non-root user, bakes in no secret, has a health check,
// keeps the workspace in a volume and is `safe` unless the operator opts in to `dangerous`; the Kubernetes
// example is one Deployment + Service per workspace with the token from a Secret, non-root, and its workspace
// on a volume. Variable names are checked against the config schema, so a typo cannot pass.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ENTRIES, PREFIX } from '../../src/config/schema.js';
import { REPO_ROOT } from '../helpers/server.js';
import { dockerInstructions, keyValues, parseYamlDocs, type Instruction } from '../helpers/static-config.js';

const KNOWN = new Set(ENTRIES.map((e) => PREFIX + e.env));
const SECRET_VARS = new Set(ENTRIES.filter((e) => e.secret).map((e) => PREFIX + e.env));
const read = (p: string) => readFileSync(path.join(REPO_ROOT, p), 'utf8');

describe('docs/design-notes.md#tests: the Dockerfile, checked statically (hadolint-style)', () => {
  const all = dockerInstructions(read('Dockerfile'));
  const lastFrom = all.map((i) => i.op).lastIndexOf('FROM');
  const final = all.slice(lastFrom);
  const of = (op: string, list: Instruction[] = final) => list.filter((i) => i.op === op);
  const env = new Map(of('ENV', all).flatMap((i) => keyValues(i.args)));
  const finalEnv = new Map(of('ENV').flatMap((i) => keyValues(i.args)));

  it('runs as a numeric non-root user (Kubernetes can then verify runAsNonRoot)', () => {
    const users = of('USER');
    expect(users.length).toBeGreaterThan(0);
    const user = (users[users.length - 1] as Instruction).args.trim();
    expect(user).toMatch(/^\d+(:\d+)?$/);
    expect(user.split(':')[0]).not.toBe('0');
  });

  it('bakes in no secret: no secret variable (config schema) or *TOKEN/PASSWORD/SECRET in ENV or ARG', () => {
    for (const i of [...of('ENV', all), ...of('ARG', all)]) {
      for (const [k] of keyValues(i.args)) {
        expect(SECRET_VARS.has(k), `${i.op} ${k} (line ${i.line})`).toBe(false);
        expect(k, `${i.op} ${k} (line ${i.line})`).not.toMatch(/(TOKEN|PASSWORD|SECRET|API_KEY)$/i);
      }
    }
    for (const k of env.keys())
      if (k.startsWith(PREFIX)) expect(KNOWN.has(k), `unknown variable ${k}`).toBe(true);
    expect(
      all.some((i) => i.op === 'COPY' && /^\.\s/.test(i.args)),
      'COPY . copies the whole context',
    ).toBe(false);
    expect(of('ADD', all)).toEqual([]);
  });

  it('has a HEALTHCHECK on /healthz (no token needed), exec form', () => {
    const hc = of('HEALTHCHECK');
    expect(hc).toHaveLength(1);
    const cmd = /CMD\s+(\[.*\])\s*$/.exec((hc[0] as Instruction).args)?.[1];
    expect(cmd).toBeDefined();
    expect((JSON.parse(cmd as string) as string[]).join(' ')).toContain('/healthz');
  });

  it('keeps the workspace in a VOLUME and serves it', () => {
    const volumes = of('VOLUME').flatMap((i) => JSON.parse(i.args) as string[]);
    expect(volumes).toContain('/workspace');
    expect(finalEnv.get('SERVICE_WORKSPACE')).toBe('/workspace');
    expect(of('EXPOSE').map((i) => i.args.trim())).toContain(finalEnv.get('SERVICE_PORT'));
  });

  it('is `safe` unless the operator opts in to `dangerous` at run time', () => {
    expect(finalEnv.get('SERVICE_PERMISSION_MODE')).toBe('safe');
    for (const i of all.filter((x) => ['ENV', 'ARG', 'ENTRYPOINT', 'CMD', 'LABEL'].includes(x.op))) {
      expect(i.args, `line ${i.line}`).not.toMatch(/dangerous/i);
    }
    const entry = of('ENTRYPOINT');
    expect(entry).toHaveLength(1);
    const argv = JSON.parse((entry[0] as Instruction).args) as string[];
    expect(argv[0]).toBe('/usr/bin/tini'); // PID 1 reaps the orphans of the commands the server runs
    expect(argv).toContain('/app/dist/cli/main.js');
  });

  it('pins base images and cleans up apt lists in the same layer', () => {
    for (const f of of('FROM', all)) expect(f.args).toMatch(/^[\w./-]+:(?!latest\b)[\w.-]+/);
    for (const r of of('RUN', all).filter((i) => i.args.includes('apt-get install'))) {
      expect(r.args).toContain('--no-install-recommends');
      expect(r.args).toContain('rm -rf /var/lib/apt/lists/*');
    }
  });

  it('the build stage has a C compiler and the native sources, and fails unless the Landlock helper and the bridge were built', () => {
    const build = all.slice(0, lastFrom);
    const runs = of('RUN', build).map((i) => i.args);
    expect(runs.some((r) => /apt-get install[^&]*\bgcc\b/.test(r) && r.includes('libc6-dev'))).toBe(true);
    expect(of('COPY', build).map((i) => i.args.trim())).toContain('native ./native');
    const ci = runs.find((r) => r.includes('npm ci')) ?? '';
    for (const helper of ['wb-landlock', 'wb-netbridge'])
      expect(ci).toContain(`test -x dist/native/${helper}`);
    expect(of('COPY').some((i) => /--from=build \/app\/dist \.\/dist/.test(i.args))).toBe(true);
  });

  it('.dockerignore keeps the checkout, dependencies and secrets out of the build context', () => {
    const ignored = read('.dockerignore')
      .split('\n')
      .map((l) => l.trim())
      .filter((l) => l && !l.startsWith('#'));
    for (const p of ['.git', 'node_modules', 'dist', '.env', '*.pem']) expect(ignored).toContain(p);
  });
});

/* eslint-disable @typescript-eslint/no-explicit-any -- parsed YAML documents */
describe('docs/design-notes.md#tests: the Kubernetes example, checked statically', () => {
  const docs = parseYamlDocs(read('deploy/kubernetes/workbench-mcp.yaml')) as any[];
  const kind = (k: string) => docs.filter((d) => d.kind === k);
  const deploy = kind('Deployment')[0];
  const pod = deploy?.spec?.template?.spec;
  const container = pod?.containers?.[0];
  const env = new Map<string, any>((container?.env ?? []).map((e: any) => [e.name, e]));
  const mountOf = (file: string) =>
    (container.volumeMounts as any[]).find((m) => file === m.mountPath || file.startsWith(m.mountPath + '/'));
  const volume = (name: string) => (pod.volumes as any[]).find((v) => v.name === name);

  it('is one Deployment + Service per workspace, with the workspace on its own claim', () => {
    expect(kind('Deployment')).toHaveLength(1);
    expect(kind('Service')).toHaveLength(1);
    expect(kind('PersistentVolumeClaim')).toHaveLength(1);
    expect(deploy.spec.replicas).toBe(1);
    expect(deploy.spec.strategy.type).toBe('Recreate');
    const ws = env.get('SERVICE_WORKSPACE').value as string;
    const claim = volume(mountOf(ws).name).persistentVolumeClaim.claimName;
    expect(claim).toBe(kind('PersistentVolumeClaim')[0].metadata.name);
    const svc = kind('Service')[0];
    expect(svc.spec.selector).toEqual(deploy.spec.template.metadata.labels);
    expect(deploy.spec.selector.matchLabels).toEqual(deploy.spec.template.metadata.labels);
    expect(container.ports.map((p: any) => p.name)).toContain(svc.spec.ports[0].targetPort);
    expect(String(svc.spec.ports[0].port)).toBe(env.get('SERVICE_PORT').value);
  });

  it('takes the token from a Secret mounted as a file; no secret value appears in the manifest', () => {
    for (const [name, e] of env) {
      expect(KNOWN.has(name), `unknown variable ${name}`).toBe(true);
      if (SECRET_VARS.has(name)) expect(e.value, `${name} given as a literal`).toBeUndefined();
    }
    const file = env.get('SERVICE_AUTH_TOKEN_FILE').value as string;
    const secretVolume = volume(mountOf(file).name);
    expect(secretVolume.secret.secretName).toBeTruthy();
    expect(mountOf(file).readOnly).toBe(true);
    expect(kind('Secret')).toEqual([]); // made with kubectl create secret, never committed
  });

  it('runs non-root with no privilege escalation, a read-only root and a writable /tmp for the runtime', () => {
    expect(pod.securityContext.runAsNonRoot).toBe(true);
    expect(pod.securityContext.runAsUser).not.toBe(0);
    expect(pod.automountServiceAccountToken).toBe(false);
    expect(container.securityContext.allowPrivilegeEscalation).toBe(false);
    expect(container.securityContext.readOnlyRootFilesystem).toBe(true);
    expect(container.securityContext.capabilities.drop).toContain('ALL');
    const runtime = env.get('SERVICE_RUNTIME_ROOT').value as string;
    expect(volume(mountOf(runtime).name).emptyDir).toEqual({});
    expect(container.image).toMatch(/:(?!latest$)[\w.-]+$/);
  });

  it('is `safe` unless the operator opts in; probes on /healthz and /readyz; metrics scraped from /metrics', () => {
    expect(env.get('SERVICE_PERMISSION_MODE').value).toBe('safe');
    expect(env.get('SERVICE_AUTH_MODE').value).not.toBe('noauth');
    expect(container.livenessProbe.httpGet.path).toBe('/healthz');
    expect(container.startupProbe.httpGet.path).toBe('/healthz');
    expect(container.readinessProbe.httpGet.path).toBe('/readyz');
    for (const probe of [container.readinessProbe, container.livenessProbe, container.startupProbe])
      expect(container.ports.map((p: any) => p.name)).toContain(probe.httpGet.port);
    const scrape = deploy.spec.template.metadata.annotations;
    expect(scrape['prometheus.io/scrape']).toBe('true');
    expect(scrape['prometheus.io/path']).toBe('/metrics');
    expect(scrape['prometheus.io/port']).toBe(env.get('SERVICE_PORT').value);
  });

  it('the YAML reader refuses what it does not understand (anchors, block scalars, tabs)', () => {
    expect(() => parseYamlDocs('a: &x 1\n')).toThrow(/subset/);
    expect(() => parseYamlDocs('a: |\n  text\n')).toThrow(/subset/);
    expect(() => parseYamlDocs('a:\n\tb: 1\n')).toThrow(/tab/);
    expect(parseYamlDocs('a:\n  - b: 1\n    c: [x, y]\n  - 2\n---\nd: 0440\n')).toEqual([
      { a: [{ b: 1, c: ['x', 'y'] }, 2] },
      { d: 288 },
    ]);
  });
});
