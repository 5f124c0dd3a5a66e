import amqp from 'amqplib';

export type { Channel, ChannelModel, ConfirmChannel, ConsumeMessage, GetMessage } from 'amqplib';

/** Connects with amqplib; channel and connection errors are swallowed on the emitter (tests assert on promises). */
export async function connect(url: string): Promise<amqp.ChannelModel> {
  const conn = await amqp.connect(url, { noDelay: true });
  conn.on('error', (e: Error) => { if (process.env.TEST_LOG) console.log('client conn error', e); });
  return conn;
}

/** connect() for a client that names its connection (the connection_name client property). */
export async function connectNamed(url: string, name: string): Promise<amqp.ChannelModel> {
  const conn = await amqp.connect(url, { noDelay: true, clientProperties: { connection_name: name } });
  conn.on('error', () => {});
  return conn;
}

/**
 * The error a connection closed with (amqplib's 'close' event): the reply code and text of a
 * connection.close, or a socket error's code ('ECONNRESET') and message.
 */
export function connectionClosed(conn: amqp.ChannelModel): Promise<{ code: number | string | undefined; text: string }> {
  return new Promise((resolve) => {
    conn.once('close', (err?: { code?: number | string; message: string }) => {
      const m = err && /with message "(.*)"$/.exec(err.message);
      resolve({ code: err?.code, text: m ? (m[1] as string) : (err?.message ?? '') });
    });
  });
}

export async function channel(conn: amqp.ChannelModel): Promise<amqp.Channel> {
  const ch = await conn.createChannel();
  ch.on('error', () => {});
  return ch;
}

export async function confirmChannel(conn: amqp.ChannelModel): Promise<amqp.ConfirmChannel> {
  const ch = await conn.createConfirmChannel();
  ch.on('error', () => {});
  return ch;
}

/** The AMQP reply code and text of a server-side close, taken from amqplib's error. */
export async function closedWith(p: Promise<unknown>): Promise<{ code: number; text: string; classId?: number; methodId?: number }> {
  try {
    await p;
  } catch (err) {
    const e = err as { code?: number; message: string; classId?: number; methodId?: number };
    const m = /with message "(.*)"$/.exec(e.message);
    return { code: e.code ?? 0, text: m ? (m[1] as string) : e.message, classId: e.classId, methodId: e.methodId };
  }
  throw new Error('expected the operation to fail with a channel or connection close');
}

/** Consumes n messages from queue on a connection of its own (acking each, prefetch as given), then closes it. */
export async function consumeAll(url: string, queue: string, n: number, prefetch = 3): Promise<amqp.ConsumeMessage[]> {
  const conn = await connect(url);
  const ch = await channel(conn);
  await ch.prefetch(prefetch);
  const msgs: amqp.ConsumeMessage[] = [];
  await new Promise<void>((resolve) => {
    void ch.consume(queue, (m) => {
      if (!m) return;
      msgs.push(m);
      ch.ack(m);
      if (msgs.length === n) resolve();
    });
  });
  await conn.close();
  return msgs;
}

/** Opens and closes a connection: 'connected', or the error amqplib reports for it (a refused login, say). */
export async function connectError(url: string): Promise<string> {
  try {
    const conn = await amqp.connect(url);
    await conn.close();
    return 'connected';
  } catch (err) {
    return (err as Error).message;
  }
}
