import type { ConfirmChannel, Options } from 'amqplib';

/** Publishes n copies of body to queue through ch, a window of 1,000 unconfirmed at most; resolves once all are confirmed. */
export async function publishConfirmed(ch: ConfirmChannel, queue: string, n: number, body: Buffer, options: Options.Publish = {}): Promise<void> {
  for (let i = 0; i < n; i++) {
    ch.sendToQueue(queue, body, options);
    if (i % 1000 === 999) await ch.waitForConfirms();
  }
  await ch.waitForConfirms();
}
