// A stand-in package registry for the `safe`-mode network tests and the proxy benchmark (README "Network in
// safe mode"): one HTTPS server on loopback with a throwaway CA (made here with openssl, removed by cleanup())
// that answers as the npm registry (packument + tarball of a tiny package generated here), as a PEP 503 simple
// index with one generated wheel, and with a large body of a given size for download timings. Commands reach
// it under default-allowed names (registry.npmjs.org, pypi.org, files.pythonhosted.org) because the server
// under test maps those names to 127.0.0.1 with the test-only WB_TEST_RESOLVE and lets loopback through with
// SERVICE_NETWORK_ALLOW_PRIVATE; the CA goes where the sandbox can read it (a directory the caller names).
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';

export const NPM_NAME = 'registry.npmjs.org';
export const PYPI_NAME = 'pypi.org';
export const FILES_NAME = 'files.pythonhosted.org';
export const PACKAGE = 'wb-tiny';
export const WHEEL_PROJECT = 'wb-tiny';
const WHEEL = 'wb_tiny-1.0.0-py3-none-any.whl';

export interface StandinRegistry {
  port: number;
  /** The CA certificate (PEM) commands must trust, at `caPath`. */
  caPath: string;
  /** `registry=` for npm. */
  npmRegistry: string;
  /** `--index-url` for pip. */
  pipIndex: string;
  /** Requests seen, `METHOD host path`. */
  seen: string[];
  close(): Promise<void>;
}

function openssl(args: string[], cwd: string): void {
  execFileSync('openssl', args, { cwd, stdio: 'ignore', timeout: 60_000 });
}

/** A CA and a leaf for `names` signed by it; the CA is written to `caPath`. */
function makeCerts(dir: string, names: readonly string[], caPath: string): { key: Buffer; cert: Buffer } {
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  openssl(
    [
      'req',
      '-x509',
      ...ec,
      '-days',
      '2',
      '-subj',
      '/CN=workbench-mcp test CA',
      '-keyout',
      'ca.key',
      '-out',
      'ca.pem',
      '-addext',
      'basicConstraints=critical,CA:TRUE',
      '-addext',
      'keyUsage=critical,keyCertSign,cRLSign',
    ],
    dir,
  );
  openssl(['req', '-new', ...ec, '-subj', `/CN=${names[0]}`, '-keyout', 'leaf.key', '-out', 'leaf.csr'], dir);
  writeFileSync(
    path.join(dir, 'leaf.ext'),
    `subjectAltName=${names.map((n) => `DNS:${n}`).join(',')}\nextendedKeyUsage=serverAuth\nbasicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature\n`,
  );
  openssl(
    [
      'x509',
      '-req',
      '-in',
      'leaf.csr',
      '-CA',
      'ca.pem',
      '-CAkey',
      'ca.key',
      '-CAcreateserial',
      '-days',
      '2',
      '-extfile',
      'leaf.ext',
      '-out',
      'leaf.pem',
    ],
    dir,
  );
  writeFileSync(caPath, readFileSync(path.join(dir, 'ca.pem')));
  return { key: readFileSync(path.join(dir, 'leaf.key')), cert: readFileSync(path.join(dir, 'leaf.pem')) };
}

/** The npm tarball of `wb-tiny` (package/package.json, package/index.js), made with tar. */
function npmTarball(dir: string): Buffer {
  const pkg = path.join(dir, 'npm', 'package');
  mkdirSync(pkg, { recursive: true });
  writeFileSync(
    path.join(pkg, 'package.json'),
    JSON.stringify({ name: PACKAGE, version: '1.0.0', main: 'index.js' }),
  );
  writeFileSync(path.join(pkg, 'index.js'), "module.exports = 'wb-tiny works';\n");
  execFileSync('tar', ['-czf', 'wb-tiny-1.0.0.tgz', 'package'], { cwd: path.dirname(pkg) });
  return readFileSync(path.join(dir, 'npm', 'wb-tiny-1.0.0.tgz'));
}

/** A minimal valid wheel (METADATA, WHEEL, RECORD, one module), made with Python's zipfile. */
function wheel(dir: string): Buffer {
  const out = path.join(dir, WHEEL);
  const script = `
import zipfile, sys
files = {
  "wb_tiny/__init__.py": "VALUE = 'wb-tiny works'\\n",
  "wb_tiny-1.0.0.dist-info/METADATA": "Metadata-Version: 2.1\\nName: wb-tiny\\nVersion: 1.0.0\\n",
  "wb_tiny-1.0.0.dist-info/WHEEL": "Wheel-Version: 1.0\\nGenerator: test\\nRoot-Is-Purelib: true\\nTag: py3-none-any\\n",
}
with zipfile.ZipFile(sys.argv[1], "w") as z:
  for n, t in files.items(): z.writestr(n, t)
  z.writestr("wb_tiny-1.0.0.dist-info/RECORD", "".join(f"{n},,\\n" for n in files) + "wb_tiny-1.0.0.dist-info/RECORD,,\\n")
`;
  execFileSync('python3', ['-c', script, out]);
  return readFileSync(out);
}

/**
 * Starts the stand-in on 127.0.0.1 (a free port). `bigBytes`: size of the body served at /big (benchmark).
 * `caDir`: where the CA is written (somewhere commands in the sandbox can read, such as the workspace).
 */
export async function startStandinRegistry(
  caDir: string,
  opts: { bigBytes?: number; extraNames?: readonly string[] } = {},
): Promise<StandinRegistry> {
  const dir = mkdtempSync(path.join(tmpdir(), 'wb-registry-'));
  const caPath = path.join(caDir, 'standin-ca.pem');
  const { key, cert } = makeCerts(
    dir,
    [NPM_NAME, PYPI_NAME, FILES_NAME, 'localhost', ...(opts.extraNames ?? [])],
    caPath,
  );
  const tgz = npmTarball(dir);
  const whl = wheel(dir);
  const big = Buffer.alloc(opts.bigBytes ?? 0, 'x');
  const seen: string[] = [];
  let port = 0;
  const server = https.createServer({ key, cert }, (req, res) => {
    const host = (req.headers.host ?? '').replace(/:\d+$/, '');
    seen.push(`${req.method} ${host} ${req.url}`);
    const url = (req.url ?? '/').split('?')[0] as string;
    const send = (type: string, body: Buffer | string) => {
      res.writeHead(200, { 'content-type': type, 'content-length': Buffer.byteLength(body) });
      res.end(body);
    };
    if (host === NPM_NAME && url === `/${PACKAGE}`) {
      const integrity = `sha512-${createHash('sha512').update(tgz).digest('base64')}`;
      const shasum = createHash('sha1').update(tgz).digest('hex');
      const tarball = `https://${NPM_NAME}:${port}/${PACKAGE}/-/${PACKAGE}-1.0.0.tgz`;
      return send(
        'application/json',
        JSON.stringify({
          name: PACKAGE,
          'dist-tags': { latest: '1.0.0' },
          versions: {
            '1.0.0': {
              name: PACKAGE,
              version: '1.0.0',
              main: 'index.js',
              dist: { tarball, integrity, shasum },
            },
          },
        }),
      );
    }
    if (host === NPM_NAME && url === `/${PACKAGE}/-/${PACKAGE}-1.0.0.tgz`)
      return send('application/octet-stream', tgz);
    if (host === PYPI_NAME && (url === `/simple/${WHEEL_PROJECT}/` || url === `/simple/${WHEEL_PROJECT}`)) {
      const sha = createHash('sha256').update(whl).digest('hex');
      const href = `https://${FILES_NAME}:${port}/packages/${WHEEL}#sha256=${sha}`;
      return send('text/html', `<!DOCTYPE html><html><body><a href="${href}">${WHEEL}</a></body></html>\n`);
    }
    if (host === FILES_NAME && url === `/packages/${WHEEL}`) return send('application/octet-stream', whl);
    if (url === '/big') return send('application/octet-stream', big);
    if (url.startsWith('/small/')) return send('application/octet-stream', Buffer.alloc(64 * 1024, 'y'));
    res.writeHead(404, { 'content-type': 'text/plain' });
    res.end('not found\n');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  port = (server.address() as AddressInfo).port;
  return {
    port,
    caPath,
    npmRegistry: `https://${NPM_NAME}:${port}/`,
    pipIndex: `https://${PYPI_NAME}:${port}/simple`,
    seen,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
        rmSync(dir, { recursive: true, force: true });
      }),
  };
}
