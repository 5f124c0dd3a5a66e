import { expect } from 'chai';
import { encodeContentHeaderPayload } from '../../src/frame/generated/properties.js';
import { Message } from '../../src/queue/message.js';
import { QueuedMessage } from '../../src/queue/queued-message.js';

describe('QueuedMessage', () => {
  const msg = new Message(1, '', 'k', encodeContentHeaderPayload(60, 1, {}), Buffer.from('x'));

  it('keeps redelivered, persisted and the delivery count apart in one number', () => {
    const e = new QueuedMessage(7, msg, 123, true);
    expect([e.seq, e.msg, e.expiresAt, e.redelivered, e.persisted, e.deliveryCount]).to.deep.equal([7, msg, 123, false, true, 0]);
    e.redelivered = true;
    e.deliveryCount++;
    e.deliveryCount++;
    expect([e.redelivered, e.persisted, e.deliveryCount]).to.deep.equal([true, true, 2]);
    e.persisted = false;
    e.redelivered = true; // already set: unchanged
    expect([e.redelivered, e.persisted, e.deliveryCount]).to.deep.equal([true, false, 2]);
    e.redelivered = false;
    e.persisted = true;
    e.persisted = true;
    expect([e.redelivered, e.persisted, e.deliveryCount]).to.deep.equal([false, true, 2]);
  });

  it('counts deliveries exactly up to the store\'s 2^32, beyond 32-bit flag arithmetic', () => {
    const e = new QueuedMessage(1, msg, 0, false, true, 2 ** 32 - 1);
    expect([e.redelivered, e.persisted, e.deliveryCount]).to.deep.equal([true, false, 2 ** 32 - 1]);
    e.persisted = true;
    e.redelivered = false;
    expect([e.redelivered, e.persisted, e.deliveryCount]).to.deep.equal([false, true, 2 ** 32 - 1]);
    e.deliveryCount = 2 ** 31 + 5;
    expect([e.redelivered, e.persisted, e.deliveryCount]).to.deep.equal([false, true, 2 ** 31 + 5]);
  });
});
