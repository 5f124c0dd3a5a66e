/**
 * The user name the EXTERNAL mechanism takes from a client certificate, as RabbitMQ's
 * rabbit_ssl:peer_cert_auth_name/2 and rabbit_cert_info:format_rdn_sequence/1 make it: the
 * subject's attributes in reverse order, `TYPE=value` joined with ',' (multi-valued RDNs with
 * '+'), values escaped as RFC 4514 asks; or, with common_name, the CN values joined with ','.
 */

import { X509Certificate } from 'node:crypto';

/** OpenSSL's short names → RabbitMQ's (rabbit_cert_info:format_rdn/1). */
const RABBIT_NAMES: Record<string, string> = {
  SN: 'SN',
  surname: 'SN',
  GN: 'GIVENNAME',
  givenName: 'GIVENNAME',
  initials: 'INITIALS',
  generationQualifier: 'GENERATIONQUALIFIER',
  CN: 'CN',
  L: 'L',
  ST: 'ST',
  O: 'O',
  OU: 'OU',
  title: 'TITLE',
  C: 'C',
  serialNumber: 'SERIALNUMBER',
  pseudonym: 'PSEUDONYM',
  DC: 'DC',
  emailAddress: 'EMAILADDRESS',
  street: 'STREET',
  UID: 'UID',
};

export interface SubjectAttribute {
  type: string;
  value: string;
}

/**
 * The subject's attributes in certificate order. Node prints the subject one attribute per
 * line (`CN=client`), values escaped as RFC 2253 asks (`\,`, and `\0A` for a control byte);
 * the values here are unescaped.
 */
export function subjectAttributes(cert: X509Certificate): SubjectAttribute[] {
  return nameAttributes(cert.subject);
}

/** The attributes of a name as Node prints it (X509Certificate's subject or issuer), unescaped. */
function nameAttributes(text: string): SubjectAttribute[] {
  const out: SubjectAttribute[] = [];
  for (const line of text.split('\n')) {
    const eq = line.indexOf('=');
    if (eq > 0) out.push({ type: line.slice(0, eq), value: unescapeRfc2253(line.slice(eq + 1)) });
  }
  return out;
}

function unescapeRfc2253(escaped: string): string {
  if (!escaped.includes('\\')) return escaped;
  const bytes: number[] = [];
  const raw = Buffer.from(escaped, 'utf8');
  for (let i = 0; i < raw.length; i++) {
    const c = raw[i]!;
    if (c !== 0x5c || i + 1 >= raw.length) {
      bytes.push(c);
      continue;
    }
    const hex = raw.subarray(i + 1, i + 3).toString('latin1');
    if (/^[0-9A-Fa-f]{2}$/.test(hex)) {
      bytes.push(parseInt(hex, 16));
      i += 2;
    } else {
      bytes.push(raw[++i]!);
    }
  }
  return Buffer.from(bytes).toString('utf8');
}

/** rabbit_cert_info:escape_rdn_value/1, over the value's UTF-8 bytes. */
export function escapeRdnValue(value: string): string {
  const bytes = Buffer.from(value, 'utf8');
  let out = '';
  for (let i = 0; i < bytes.length; i++) {
    const c = bytes[i]!;
    const ch = String.fromCharCode(c);
    if (i === 0 && (ch === ' ' || ch === '#')) out += `\\${ch}`;
    else if (i === bytes.length - 1 && ch === ' ') out += '\\ ';
    else if ('"+,;<>\\'.includes(ch)) out += `\\${ch}`;
    else if (c < 32 || c >= 126) out += `\\${c.toString(16).toUpperCase().padStart(2, '0')}`;
    else out += ch;
  }
  return out;
}

/** The distinguished name RabbitMQ builds from a certificate's subject. */
export function distinguishedName(cert: X509Certificate): string {
  return formatName(subjectAttributes(cert));
}

/** The issuer's name as RabbitMQ shows it (rabbit_cert_info:issuer/1: the management API's peer_cert_issuer). */
export function issuerName(cert: X509Certificate): string {
  return formatName(nameAttributes(cert.issuer));
}

/** rabbit_cert_info:format_rdn_sequence/1. */
function formatName(attributes: SubjectAttribute[]): string {
  return attributes
    .reverse()
    .map((a) => `${RABBIT_NAMES[a.type] ?? a.type}=${escapeRdnValue(a.value)}`)
    .join(',');
}

/** The user name for EXTERNAL, or undefined when the certificate has no such name. */
export function peerCertAuthName(der: Buffer, from: 'distinguished_name' | 'common_name'): string | undefined {
  const cert = new X509Certificate(der);
  if (from === 'distinguished_name') return distinguishedName(cert);
  const cns = subjectAttributes(cert).filter((a) => a.type === 'CN').map((a) => a.value);
  return cns.length > 0 ? cns.join(',') : undefined;
}
