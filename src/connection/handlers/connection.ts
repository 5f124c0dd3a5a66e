import { DIRECT_USER } from '../../access/access-control.js';
import { ConnectionError, ReplyCode } from '../../errors.js';
import { decodeTable, toJS, type FieldTable } from '../../frame/field-table.js';
import type { Method } from '../../frame/generated/methods.js';
import { peerCertAuthName } from '../../tls/peer-identity.js';
import type { Connection } from '../connection.js';
import { checkUserConnectionLimit } from '../user-limits.js';
import { checkVhostConnectionLimit } from '../vhost-connection-limit.js';

/** The minimum frame size every peer must accept (spec: frame-min-size). */
const FRAME_MIN_SIZE = 4096;

/**
 * Channel-0 methods: the handshake (start-ok, tune-ok, open) and connection.close, in the
 * order and with the checks RabbitMQ's rabbit_reader applies.
 */
export function handleConnectionMethod(conn: Connection, method: Method): void {
  const expect = (state: Connection['state']) => {
    if (conn.state !== state) throw unexpectedInState(conn, method);
  };
  switch (method.name) {
    case 'connection.start-ok': {
      expect('starting');
      const { mechanism, response } = method.args;
      conn.clientProperties = method.args.clientProperties;
      const username = throttledLogin(conn, mechanism, response);
      // rabbit_reader counts its logins; rabbit_direct (the direct listener's) does not.
      if (!conn.viaDirectListener) conn.broker.metrics.authAttempt('amqp091', username !== undefined);
      if (username === undefined) {
        // With authentication_failure_close (which RabbitMQ advertises) the client gets a close.
        throw new ConnectionError(
          ReplyCode.ACCESS_REFUSED,
          `Login was refused using authentication mechanism ${mechanism}. For details see the broker logfile.`,
        ).withoutMethod();
      }
      conn.username = username;
      conn.authMechanism = mechanism;
      conn.state = 'tuning';
      const { config } = conn.broker;
      conn.send(0, 'connection.tune', { channelMax: config.channelMax, frameMax: config.frameMax, heartbeat: config.heartbeat });
      return;
    }
    case 'connection.tune-ok': {
      expect('tuning');
      const { config } = conn.broker;
      const { frameMax, channelMax, heartbeat } = method.args;
      validateNegotiated('frame_max', FRAME_MIN_SIZE, config.frameMax, frameMax);
      validateNegotiated('channel_max', 0, config.channelMax, channelMax);
      conn.tuned(frameMax === 0 ? config.frameMax : frameMax, channelMax === 0 ? config.channelMax : channelMax, heartbeat);
      return;
    }
    case 'connection.open': {
      expect('opening');
      const vhost = conn.broker.vhosts.get(method.args.virtualHost);
      if (!vhost) {
        throw new ConnectionError(ReplyCode.NOT_ALLOWED, `vhost ${method.args.virtualHost} not found`).at(method.classId, method.methodId);
      }
      // rabbit_reader's order: the vhost's connection limit, the user's, then the permission.
      checkVhostConnectionLimit(conn, vhost);
      checkUserConnectionLimit(conn);
      // Deny by default: only a permission entry in the vhost opens it (check_vhost_access).
      const access = conn.broker.access;
      if (!conn.unrestricted && !access.mayAccessVhost(conn.username, vhost.name)) {
        throw new ConnectionError(ReplyCode.NOT_ALLOWED, `access to vhost '${vhost.name}' refused for user '${conn.username}'`).at(method.classId, method.methodId);
      }
      conn.send(0, 'connection.open-ok', { reserved1: '' });
      conn.opened(vhost, conn.unrestricted ? access.directAuthorizer(vhost.name) : access.authorizer(conn.username, vhost.name));
      // Through the broker's logger with the connection's fields: the same line, without a
      // child logger for every connection (most never log anything else).
      conn.broker.log.info({ ...conn.logFields(), user: conn.username, vhost: vhost.name }, 'connection opened');
      return;
    }
    case 'connection.close':
      conn.log.info({ code: method.args.replyCode, text: method.args.replyText }, 'client closed connection');
      conn.closeByClient();
      return;
    case 'connection.close-ok':
      if (conn.state === 'open') throw unexpectedInState(conn, method);
      conn.destroy();
      return;
    case 'connection.update-secret':
      expect('open');
      conn.send(0, 'connection.update-secret-ok', {});
      return;
    default:
      throw unexpectedInState(conn, method);
  }
}

/** rabbit_reader's answer to a method channel 0 does not expect in its state. */
function unexpectedInState(conn: Connection, method: Method): ConnectionError {
  const state = conn.state === 'open' ? 'running' : conn.state;
  return new ConnectionError(ReplyCode.CHANNEL_ERROR, `unexpected method in connection state ${state}`).at(method.classId, method.methodId);
}

function parseCredentials(mechanism: string, response: Buffer): { username: string; password: string } {
  if (mechanism === 'PLAIN') {
    // \0 authcid \0 password: rabbit_auth_mechanism_plain takes no authzid.
    const [authzid, username, password, extra] = response.toString('utf8').split('\u0000');
    // RabbitMQ refuses anything else as an invalid response: the client just loses the socket.
    if (authzid !== '' || username === undefined || password === undefined || extra !== undefined) {
      throw new ConnectionError(ReplyCode.SYNTAX_ERROR, 'malformed PLAIN response');
    }
    return { username, password };
  }
  if (mechanism === 'AMQPLAIN') {
    // A field table without its length prefix: LOGIN and PASSWORD.
    const withLength = Buffer.alloc(response.length + 4);
    withLength.writeUInt32BE(response.length, 0);
    response.copy(withLength, 4);
    let table: FieldTable;
    try {
      table = decodeTable(withLength, 0).table;
    } catch {
      throw new ConnectionError(ReplyCode.SYNTAX_ERROR, 'malformed AMQPLAIN response');
    }
    const login = table['LOGIN'];
    const password = table['PASSWORD'];
    // "AMQPLAIN auth info ... is missing LOGIN or PASSWORD field": a protocol error, the socket closed.
    if (login === undefined || password === undefined) throw new ConnectionError(ReplyCode.SYNTAX_ERROR, 'AMQPLAIN response without LOGIN or PASSWORD');
    return { username: String(toJS(login)), password: String(toJS(password)) };
  }
  throw new ConnectionError(ReplyCode.COMMAND_INVALID, `invalid authentication mechanism '${mechanism}'`);
}

/** Where the direct listener's password logins are counted by the login throttle (they have no client address). */
const DIRECT_LISTENER_PEER = 'direct listener';

/**
 * The user connection.start-ok's mechanism and response authenticate, or undefined (logged) if
 * refused, under the failed-login back-off (LoginThrottle) per client address. The direct
 * listener's password logins share one record; its logins with the broker's direct secret (the
 * broker's own shovels) are never held back, so nobody's failed logins there can stop them.
 */
function throttledLogin(conn: Connection, mechanism: string, response: Buffer): string | undefined {
  const credentials = mechanism === 'EXTERNAL' && conn.isTls ? undefined : parseCredentials(mechanism, response);
  const direct = conn.viaDirectListener;
  if (direct && credentials !== undefined && conn.broker.access.isDirectSecret(credentials.password)) return secretLogin(conn, credentials.username);
  const throttle = conn.broker.loginThrottle;
  const peer = direct ? DIRECT_LISTENER_PEER : conn.remoteAddress;
  const refusedFor = throttle.refusedFor(peer);
  if (refusedFor > 0) {
    conn.log.warn({ retryInMs: Math.ceil(refusedFor) }, 'login refused: too many failed logins from this address');
    return undefined;
  }
  const username = credentials === undefined ? externalLogin(conn) : passwordLogin(conn, credentials);
  if (username === undefined) {
    const backoff = throttle.failed(peer);
    if (backoff !== undefined) conn.log.warn({ backoffMs: backoff }, `failed logins from ${peer}: refusing its logins for ${backoff / 1000} s`);
    return undefined;
  }
  throttle.succeeded(peer);
  if (direct) conn.loggedInDirect();
  return username;
}

/**
 * The user a PLAIN or AMQPLAIN login authenticates, or undefined (logged) if it is refused. On
 * the direct listener without the loopback rule: rabbit_direct has none.
 */
function passwordLogin(conn: Connection, { username, password }: { username: string; password: string }): string | undefined {
  // The password is compared with the stored hash in constant time, and never logged.
  if (!conn.broker.access.authenticate(username, password)) {
    conn.log.warn({ user: username }, password === '' ? 'login refused: empty password' : 'login refused: invalid credentials');
    return undefined;
  }
  return conn.viaDirectListener || loopbackAllows(conn, username) ? username : undefined;
}

/**
 * A login with the broker's direct secret, on the direct listener only (a shovel's `amqp://`;
 * rabbit_direct:auth_fun): without a user as DIRECT_USER, which may do anything; with one, as
 * that user, whose password is not asked for.
 */
function secretLogin(conn: Connection, username: string): string | undefined {
  if (username !== DIRECT_USER && !conn.broker.access.hasUser(username)) {
    conn.log.warn({ user: username }, 'login refused: no such user for a direct connection');
    return undefined;
  }
  conn.loggedInDirect();
  return username;
}

/**
 * The user EXTERNAL authenticates: named by the client certificate (rabbit_auth_mechanism_ssl),
 * as its distinguished name or CN. RabbitMQ refuses it unless the listener verifies peers.
 */
function externalLogin(conn: Connection): string | undefined {
  const tls = conn.broker.config.tls;
  const refuse = (reason: string): undefined => {
    conn.log.warn({ mechanism: 'EXTERNAL' }, `login refused: ${reason}`);
    return undefined;
  };
  const der = conn.peerCertificate;
  if (!tls || tls.verify !== 'verify_peer') return refuse('TLS configuration is unsafe (ssl_options.verify is not verify_peer)');
  if (!der) return refuse('connection peer presented no TLS (x.509) certificate');
  const username = peerCertAuthName(der, tls.ssl_cert_login_from ?? 'distinguished_name');
  if (username === undefined) return refuse('no name found');
  if (!conn.broker.access.hasUser(username)) return refuse(`user '${username}' (from the peer certificate) does not exist`);
  return loopbackAllows(conn, username) ? username : undefined;
}

/** RabbitMQ's loopback_users: these users may only connect from loopback, whatever the mechanism. */
function loopbackAllows(conn: Connection, username: string): boolean {
  if (!conn.broker.access.loopbackAllows(username, conn.socket.remoteAddress ?? '')) {
    conn.log.warn({ user: username }, `login refused: user '${username}' can only connect via localhost`);
    return false;
  }
  return true;
}

/** rabbit_reader:validate_negotiated_integer_value. */
function validateNegotiated(field: string, min: number, serverMax: number, clientValue: number): void {
  if (clientValue !== 0 && clientValue < min) {
    throw new ConnectionError(ReplyCode.NOT_ALLOWED, `negotiated ${field} = ${clientValue} is lower than the minimum allowed value (${min})`).at(10, 31);
  }
  if (serverMax !== 0 && (clientValue === 0 || clientValue > serverMax)) {
    const detail = field === 'channel_max' && clientValue === 0 ? ' (no limit)' : '';
    throw new ConnectionError(ReplyCode.NOT_ALLOWED, `negotiated ${field} = ${clientValue}${detail} is higher than the maximum allowed value (${serverMax})`).at(10, 31);
  }
}
