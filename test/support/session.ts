import { connect, type Channel, type ChannelModel } from './amqp.js';
import { RawClient } from '../../conformance/lib/raw-client.js';

/** Per-test clients for a describe block that shares one broker. */
export class Session {
  /** An amqplib connection opened before each test and closed after it. */
  conn!: ChannelModel;
  private readonly raws: RawClient[] = [];
  private seq = 0;

  constructor(private readonly broker: { readonly url: string; readonly port: number }) {}

  /** A name no other test uses (the broker is shared by the whole describe). */
  readonly uniq = (prefix: string): string => `${prefix}-${++this.seq}`;

  /** A raw peer, destroyed after the test even when an assertion fails. */
  readonly openRaw = async (): Promise<RawClient> => {
    const c = await RawClient.open(this.broker.url);
    this.raws.push(c);
    return c;
  };

  async open(): Promise<void> {
    this.conn = await connect(this.broker.url);
  }

  async close(): Promise<void> {
    for (const c of this.raws.splice(0)) c.destroy();
    await this.conn.close().catch(() => {});
  }
}

/** Registers the session's hooks on the enclosing describe. */
export function useSession(broker: { readonly url: string; readonly port: number }): Session {
  const session = new Session(broker);
  beforeEach(() => session.open());
  afterEach(() => session.close());
  return session;
}

/** Takes every ready message off a queue (no-ack) and returns the bodies in order. */
export async function drainBodies(ch: Channel, queue: string): Promise<string[]> {
  const out: string[] = [];
  for (;;) {
    const m = await ch.get(queue, { noAck: true });
    if (!m) return out;
    out.push(m.content.toString());
  }
}
