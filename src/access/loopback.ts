/**
 * Whether a socket's peer address is a loopback one (rabbit_net:is_loopback): 127.0.0.0/8,
 * ::1, and IPv4 loopback addresses mapped into IPv6. RabbitMQ's loopback_users may only log in
 * from such an address.
 */
export function isLoopbackAddress(address: string): boolean {
  return address.startsWith('127.') || address === '::1' || address.startsWith('::ffff:127.');
}
