import { expect } from 'chai';
import amqpCallback from 'amqplib/callback_api';
import { useBroker } from '../support/broker.js';

/** amqplib's callback API works end to end too (issue: promise and callback APIs). */
describe('amqplib callback API', () => {
  const broker = useBroker();

  it('connects, declares, publishes with confirms, consumes with prefetch and acks', async () => {
    const bodies = await new Promise<string[]>((resolve, reject) => {
      amqpCallback.connect(broker.url, (err, conn) => {
        if (err) return reject(err);
        conn.createConfirmChannel((err2, ch) => {
          if (err2) return reject(err2);
          ch.assertQueue('', { exclusive: true }, (err3, ok) => {
            if (err3) return reject(err3);
            const got: string[] = [];
            ch.prefetch(1);
            ch.consume(ok.queue, (m) => {
              if (!m) return;
              got.push(m.content.toString());
              ch.ack(m);
              if (got.length === 3) conn.close(() => resolve(got));
            }, {}, (err4) => {
              if (err4) return reject(err4);
              for (const b of ['one', 'two', 'three']) ch.sendToQueue(ok.queue, Buffer.from(b), {}, (e) => e && reject(e));
            });
          });
        });
      });
    });
    expect(bodies).to.deep.equal(['one', 'two', 'three']);
  });
});
