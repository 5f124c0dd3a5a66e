/**
 * Client addresses as RabbitMQ shows and counts them (rabbit_misc:ntoab): an IPv4-mapped IPv6
 * address is its IPv4 address; IPv6 in brackets when a port follows.
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
