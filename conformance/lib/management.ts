/**
 * A minimal client for a broker's management HTTP API, for cases that set policies (RabbitMQ has
 * no AMQP method for them). Node's fetch with basic auth; responses are recorded as
 * {status, body} (body parsed as JSON, or null when empty).
 *
 * Where the API is: `--mgmt URL` (or `--ref-mgmt`/`--cand-mgmt`), else RabbitMQ's test-harness
 * convention of this suite: the AMQP port + 10000 on the same host, with the AMQP URL's
 * credentials (reference-rabbitmq.sh starts RabbitMQ so). `none`: there is none (every request
 * fails at once).
 */
export interface HttpOutcome {
  status: number;
  body: unknown;
}

export class ManagementClient {
  private readonly auth: string;

  constructor(
    readonly baseUrl: string,
    user: string,
    password: string,
  ) {
    this.auth = `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;
  }

  /** The management API of the broker at amqpUrl: explicit, or on the AMQP port + 10000. */
  static forAmqpUrl(amqpUrl: string, explicit?: string): ManagementClient {
    const u = new URL(amqpUrl);
    const user = decodeURIComponent(u.username || 'guest');
    const password = decodeURIComponent(u.password || 'guest');
    const base = explicit ?? `http://${u.hostname}:${Number(u.port || 5672) + 10000}`;
    return new ManagementClient(base.replace(/\/$/, ''), user, password);
  }

  async request(method: string, path: string, body?: unknown): Promise<HttpOutcome> {
    if (this.baseUrl === 'none') throw new Error('the broker under test serves no management API');
    const r = await fetch(`${this.baseUrl}${path}`, {
      method,
      headers: { authorization: this.auth, 'content-type': 'application/json' },
      body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    });
    const text = await r.text();
    let parsed: unknown = null;
    if (text !== '') {
      try {
        parsed = JSON.parse(text);
      } catch {
        parsed = text;
      }
    }
    return { status: r.status, body: parsed };
  }
}
