/**
 * The protocol header a client sends first (spec 4.2.2): "AMQP" 0 0 9 1.
 *
 * RabbitMQ 3.10 (rabbit_reader:handle_input(handshake, ...)) waits for all 8 octets, then accepts
 * AMQP 0-9-1, also takes "AMQP" 1 1 0 9 (0-9) as 0-9-1 (answering connection.start with version
 * 0-9), speaks 0-8 for 1 1 8 0 / 1 1 9 1, hands "AMQP" x 1 0 0 to AMQP 1.0, and answers anything
 * else by writing AMQP_0_9_1_HEADER and closing the socket.
 */

export const AMQP_0_9_1_HEADER: Buffer = Buffer.from('AMQP\x00\x00\x09\x01', 'latin1');

export type ProtocolHeaderCheck = 'ok' | 'incomplete' | 'mismatch';

/** 'ok' for an AMQP 0-9-1 header, 'incomplete' before 8 octets, else 'mismatch'. */
export function checkProtocolHeader(buf: Buffer): ProtocolHeaderCheck {
  if (buf.length < 8) return 'incomplete';
  return buf.compare(AMQP_0_9_1_HEADER, 0, 8, 0, 8) === 0 ? 'ok' : 'mismatch';
}

export type ProtocolVersion = 'amqp-0-9-1' | 'amqp-0-9' | 'amqp-0-8' | 'amqp-1-0' | 'other';

/** What RabbitMQ 3.10 makes of a complete 8-octet header (undefined before 8 octets). */
export function classifyProtocolHeader(buf: Buffer): ProtocolVersion | undefined {
  if (buf.length < 8) return undefined;
  if (buf.toString('latin1', 0, 4) !== 'AMQP') return 'other';
  const [a, b, c, d] = [buf[4]!, buf[5]!, buf[6]!, buf[7]!];
  if (a === 0 && b === 0 && c === 9 && d === 1) return 'amqp-0-9-1';
  if (a === 1 && b === 1 && c === 0 && d === 9) return 'amqp-0-9';
  if (a === 1 && b === 1 && ((c === 8 && d === 0) || (c === 9 && d === 1))) return 'amqp-0-8';
  if (b === 1 && c === 0 && d === 0) return 'amqp-1-0';
  return 'other';
}
