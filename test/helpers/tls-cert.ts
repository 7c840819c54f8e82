// One throwaway self-signed certificate for the TLS tests (the reverse proxy, tunnel stand-ins, client
// metadata document servers): an EC key and a certificate for the given names, made by openssl in a temp dir.
import { execFileSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

export interface CertFiles {
  dir: string;
  keyPath: string;
  certPath: string;
}

/** A certificate whose CN is the first DNS name and whose subjectAltName lists every DNS name and IP. */
export function selfSignedCert(
  dnsNames: readonly string[],
  ips: readonly string[] = ['127.0.0.1'],
): CertFiles {
  const dir = mkdtempSync(path.join(tmpdir(), 'wb-tls-'));
  const keyPath = path.join(dir, 'key.pem');
  const certPath = path.join(dir, 'cert.pem');
  const san = [...dnsNames.map((d) => `DNS:${d}`), ...ips.map((ip) => `IP:${ip}`)].join(',');
  execFileSync(
    'openssl',
    [
      ...[
        'req',
        '-x509',
        '-newkey',
        'ec',
        '-pkeyopt',
        'ec_paramgen_curve:prime256v1',
        '-nodes',
        '-days',
        '2',
      ],
      ...['-subj', `/CN=${dnsNames[0]}`, '-addext', `subjectAltName=${san}`],
      ...['-keyout', keyPath, '-out', certPath],
    ],
    { stdio: 'ignore', timeout: 60_000 },
  );
  return { dir, keyPath, certPath };
}
