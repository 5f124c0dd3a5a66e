import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { makeTmpDir, removeDir } from './tmp-dir.js';

/** A certificate and its key, as files and as PEM. */
export interface Issued {
  cert: string;
  key: string;
  certPem: Buffer;
  keyPem: Buffer;
}

/**
 * A throwaway PKI made with the openssl command: a CA, certificates it signs, and a second CA
 * nothing trusts. `dispose()` removes the files.
 */
export class TestPki {
  readonly dir = makeTmpDir('warren-pki-');
  readonly ca: Issued;
  readonly otherCa: Issued;

  constructor() {
    this.ca = this.selfSigned('ca', '/C=GB/O=Warren Tests/CN=Warren Test CA');
    this.otherCa = this.selfSigned('other-ca', '/CN=Untrusted CA');
  }

  /** A server certificate for localhost / 127.0.0.1. */
  server(name = 'server', subject = '/CN=localhost', by: Issued = this.ca): Issued {
    return this.issue(name, subject, by, 'subjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth');
  }

  /** A client certificate with this subject (openssl's /K=V/... form). */
  client(name: string, subject: string, by: Issued = this.ca): Issued {
    return this.issue(name, subject, by, 'extendedKeyUsage=clientAuth');
  }

  dispose(): void {
    removeDir(this.dir);
  }

  private selfSigned(name: string, subject: string): Issued {
    const files = this.files(name);
    openssl(['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '2', '-subj', subject, '-keyout', files.key, '-out', files.cert]);
    return this.read(files);
  }

  private issue(name: string, subject: string, by: Issued, extensions: string): Issued {
    const files = this.files(name);
    const csr = join(this.dir, `${name}.csr`);
    const ext = join(this.dir, `${name}.ext`);
    writeFileSync(ext, `${extensions}\n`);
    openssl(['req', '-utf8', '-newkey', 'rsa:2048', '-nodes', '-subj', subject, '-keyout', files.key, '-out', csr]);
    openssl(['x509', '-req', '-in', csr, '-CA', by.cert, '-CAkey', by.key, '-CAcreateserial', '-days', '2', '-extfile', ext, '-out', files.cert]);
    return this.read(files);
  }

  private files(name: string): { cert: string; key: string } {
    return { cert: join(this.dir, `${name}.pem`), key: join(this.dir, `${name}.key`) };
  }

  private read(files: { cert: string; key: string }): Issued {
    return { ...files, certPem: readFileSync(files.cert), keyPem: readFileSync(files.key) };
  }
}

function openssl(args: string[]): void {
  execFileSync('openssl', args, { stdio: ['ignore', 'ignore', 'pipe'] });
}
