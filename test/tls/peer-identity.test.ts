import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { X509Certificate } from 'node:crypto';
import { distinguishedName, escapeRdnValue, peerCertAuthName } from '../../src/tls/peer-identity.js';
import { TestPki } from '../support/tls-certs.js';

describe("TLS: the user name EXTERNAL takes from a certificate (rabbit_cert_info's format)", () => {
  it('escapes RDN values as escape_rdn_value/1 does', () => {
    expect(escapeRdnValue('plain-name_1')).to.equal('plain-name_1');
    expect(escapeRdnValue(' lead')).to.equal('\\ lead');
    expect(escapeRdnValue('#hash')).to.equal('\\#hash');
    expect(escapeRdnValue('a#b')).to.equal('a#b');
    expect(escapeRdnValue('trail ')).to.equal('trail\\ ');
    expect(escapeRdnValue('a,b+c;d<e>f"g\\h')).to.equal('a\\,b\\+c\\;d\\<e\\>f\\"g\\\\h');
    expect(escapeRdnValue('~ü')).to.equal('\\7E\\C3\\BC');
  });

  it("writes the subject in reverse order with RabbitMQ's attribute names", function () {
    this.timeout(20_000);
    const pki = new TestPki();
    try {
      const issued = pki.client('dn', '/DC=org/DC=example/C=GB/ST=Somerset/L=Bath/O=Acme, Ltd/OU=Ops/OU=Queues/CN=worker 7/emailAddress=ops@example.org');
      const der = new X509Certificate(readFileSync(issued.cert)).raw;
      expect(peerCertAuthName(der, 'distinguished_name')).to.equal(
        'EMAILADDRESS=ops@example.org,CN=worker 7,OU=Queues,OU=Ops,O=Acme\\, Ltd,L=Bath,ST=Somerset,C=GB,DC=example,DC=org',
      );
      expect(peerCertAuthName(der, 'common_name')).to.equal('worker 7');
      const noCn = pki.client('nocn', '/O=Acme');
      expect(peerCertAuthName(new X509Certificate(readFileSync(noCn.cert)).raw, 'common_name')).to.equal(undefined);
      expect(distinguishedName(new X509Certificate(readFileSync(noCn.cert)))).to.equal('O=Acme');
      const utf8 = pki.client('utf8', '/CN=Zoë; Co');
      expect(peerCertAuthName(new X509Certificate(readFileSync(utf8.cert)).raw, 'distinguished_name')).to.equal('CN=Zo\\C3\\AB\\; Co');
      expect(peerCertAuthName(new X509Certificate(readFileSync(utf8.cert)).raw, 'common_name')).to.equal('Zoë; Co');
    } finally {
      pki.dispose();
    }
  });

  it('agrees with openssl on the order of the subject', function () {
    this.timeout(20_000);
    const pki = new TestPki();
    try {
      const issued = pki.client('order', '/C=GB/O=Warren Tests/CN=app-client');
      const printed = execFileSync('openssl', ['x509', '-noout', '-subject', '-nameopt', 'RFC2253', '-in', issued.cert]).toString().trim();
      // RFC 2253 prints the last RDN first, as RabbitMQ does.
      expect(printed).to.equal('subject=CN=app-client,O=Warren Tests,C=GB');
      expect(peerCertAuthName(new X509Certificate(readFileSync(issued.cert)).raw, 'distinguished_name')).to.equal('CN=app-client,O=Warren Tests,C=GB');
    } finally {
      pki.dispose();
    }
  });
});
