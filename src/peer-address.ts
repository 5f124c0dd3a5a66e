/**
 * Addresses in their printed forms: a client's as RabbitMQ shows and counts it (rabbit_misc:ntoab:
 * an IPv4-mapped IPv6 address is its IPv4 address; IPv6 in brackets when a port follows), and a
 * listener's as a URL that reaches it from this machine.
 */

/** rabbit_misc:ntoab without the brackets: what RabbitMQ shows as host and peer_host. */
export function plainAddress(address: string | undefined): string {
  const a = address ?? '';
  return a.startsWith('::ffff:') && a.includes('.') ? a.slice(7) : a;
}

/** An address and port as RabbitMQ prints them: IPv4 as is, IPv6 in brackets. */
export function hostPort(address: string | undefined, port: number | undefined): string {
  const a = plainAddress(address);
  return `${a.includes(':') ? `[${a}]` : a}:${port ?? 0}`;
}

/** A listener's bind address as written in a URL that reaches it from this machine: a wildcard is loopback. */
export function urlHost(host: string): string {
  if (host === '0.0.0.0' || host === '') return '127.0.0.1';
  if (host === '::') return '[::1]';
  return host.includes(':') ? `[${host}]` : host;
}
