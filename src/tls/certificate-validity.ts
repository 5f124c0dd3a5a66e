/**
 * When the certificates of a PEM file expire, as RabbitMQ's certificate-expiration health check
 * reads them (rabbit_mgmt_wm_health_check_certificate_expiration:cert_validity): each entry of
 * the file must be a certificate.
 */
import { X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';

/** notAfter of each certificate in the file (ms since the epoch), or why the file cannot be read as certificates. */
export function certificateExpiries(path: string): number[] | { error: string } {
  let text: string;
  try {
    text = readFileSync(path, 'latin1');
  } catch (err) {
    return { error: (err as NodeJS.ErrnoException).code ?? String(err) };
  }
  const entries = [...text.matchAll(/-----BEGIN ([A-Z0-9 ]+)-----[\s\S]*?-----END \1-----/g)];
  if (entries.length === 0) return { error: 'The certificate file provided does not contain any PEM entry.' };
  const out: number[] = [];
  for (const [pem, type] of entries) {
    if (type !== 'CERTIFICATE') return { error: `The certificate file provided contains a '${type}' entry` };
    out.push(Date.parse(new X509Certificate(pem).validTo));
  }
  return out;
}
