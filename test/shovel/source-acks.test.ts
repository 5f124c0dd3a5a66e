import { expect } from 'chai';
import type { Channel, ConsumeMessage } from 'amqplib';
import { SourceAcks } from '../../src/shovel/source-acks.js';

/** A source channel that records what the shovel sends it. */
function recordingChannel(): { channel: Channel; sent: string[] } {
  const sent: string[] = [];
  const tag = (m: ConsumeMessage) => m.fields.deliveryTag;
  const channel = {
    ack: (m: ConsumeMessage, multiple = false) => sent.push(`ack ${tag(m)}${multiple ? ' multiple' : ''}`),
    nack: (m: ConsumeMessage, multiple = false, requeue = true) => sent.push(`nack ${tag(m)}${multiple ? ' multiple' : ''}${requeue ? ' requeue' : ''}`),
  } as unknown as Channel;
  return { channel, sent };
}

const delivery = (deliveryTag: number) => ({ fields: { deliveryTag } }) as ConsumeMessage;
const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('shovel: acknowledgements at the source (SourceAcks)', () => {
  it('acks the settled prefix with one multiple ack per turn, and nothing past a delivery still pending', async () => {
    const { channel, sent } = recordingChannel();
    const acked: number[] = [];
    const acks = new SourceAcks(channel, (n) => acked.push(n));
    const refs = [1, 2, 3, 4, 5].map((t) => acks.track(delivery(t)));
    acks.settle(refs[1]!, true);
    acks.settle(refs[0]!, true);
    acks.settle(refs[3]!, true); // 3 is still pending: 4 waits for it
    await turn();
    expect(sent).to.deep.equal(['ack 2 multiple']);
    acks.settle(refs[2]!, true);
    acks.settle(refs[4]!, true);
    await turn();
    expect(sent).to.deep.equal(['ack 2 multiple', 'ack 5 multiple']);
    expect(acked).to.deep.equal([2, 3]);
    expect(acks.outstanding).to.equal(0);
  });

  it('a delivery the destination refused is nacked with requeue on its own, after the acks before it', async () => {
    const { channel, sent } = recordingChannel();
    const acked: number[] = [];
    const acks = new SourceAcks(channel, (n) => acked.push(n));
    const refs = [7, 8, 9, 10].map((t) => acks.track(delivery(t)));
    acks.settle(refs[0]!, true);
    acks.settle(refs[1]!, false);
    acks.settle(refs[2]!, true);
    acks.settle(refs[3]!, true);
    acks.flushNow();
    expect(sent).to.deep.equal(['ack 7 multiple', 'nack 8 requeue', 'ack 10 multiple']);
    expect(acked).to.deep.equal([3]);
  });

  it('keeps refs valid across compaction of a long run', async () => {
    const { channel, sent } = recordingChannel();
    let total = 0;
    const acks = new SourceAcks(channel, (n) => (total += n));
    for (let round = 0; round < 5; round++) {
      const refs: number[] = [];
      for (let i = 0; i < 3000; i++) refs.push(acks.track(delivery(round * 3000 + i + 1)));
      for (const r of refs.reverse()) acks.settle(r, true);
      await turn();
    }
    expect(total).to.equal(15000);
    expect(sent.at(-1)).to.equal('ack 15000 multiple');
    expect(acks.outstanding).to.equal(0);
  });
});
