import { ConnectionError, ReplyCode } from '../../errors.js';
import { decodeTable, toJS, type FieldTable } from '../../frame/field-table.js';
import type { Method } from '../../frame/generated/methods.js';
import type { Connection } from '../connection.js';

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
      const caps = conn.clientProperties['capabilities'];
      if (caps && caps.type === 'F') conn.capabilities = caps.value;
      const credentials = parseCredentials(mechanism, response);
      if (!authenticate(conn, credentials.username, credentials.password)) {
        // With authentication_failure_close (which RabbitMQ advertises) the client gets a close.
        throw new ConnectionError(
          ReplyCode.ACCESS_REFUSED,
          `Login was refused using authentication mechanism ${mechanism}. For details see the broker logfile.`,
        ).withoutMethod();
      }
      conn.username = credentials.username;
      conn.authMechanism = mechanism;
      conn.state = 'tuning';
      const { config } = conn.broker;
      conn.send(0, 'connection.tune', { channelMax: config.channelMax, frameMax: config.frameMax, heartbeat: config.heartbeat });
      return;
    }
    case 'connection.secure-ok':
      throw new ConnectionError(ReplyCode.COMMAND_INVALID, 'unexpected connection.secure-ok').at(method.classId, method.methodId);
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
      const user = conn.broker.config.users.find((u) => u.username === conn.username);
      if (user?.vhosts && !user.vhosts.includes(vhost.name)) {
        throw new ConnectionError(ReplyCode.NOT_ALLOWED, `access to vhost '${vhost.name}' refused for user '${conn.username}'`).at(method.classId, method.methodId);
      }
      conn.send(0, 'connection.open-ok', { reserved1: '' });
      conn.opened(vhost);
      conn.log.info({ user: conn.username, vhost: vhost.name }, 'connection opened');
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
    case 'connection.blocked':
    case 'connection.unblocked':
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
    // authzid \0 authcid \0 password
    const [, username, password, extra] = response.toString('utf8').split('\u0000');
    // RabbitMQ's PLAIN parser crashes on anything else: the client just loses the socket.
    if (username === undefined || password === undefined || extra !== undefined) {
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
      return { username: '', password: '' };
    }
    const login = table['LOGIN'];
    const password = table['PASSWORD'];
    return { username: login ? String(toJS(login)) : '', password: password ? String(toJS(password)) : '' };
  }
  throw new ConnectionError(ReplyCode.COMMAND_INVALID, `unknown authentication mechanism '${mechanism}'`);
}

function authenticate(conn: Connection, username: string, password: string): boolean {
  const user = conn.broker.config.users.find((u) => u.username === username);
  if (!user || user.password !== password) {
    conn.log.warn({ user: username }, 'login refused: invalid credentials');
    return false;
  }
  if (conn.broker.config.loopbackUsers.includes(username) && !conn.isLoopback) {
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
