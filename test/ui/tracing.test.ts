// The web UI's Tracing page (src/management/ui/pages/tracing.js) in headless Chromium: a user
// turns tracing on for a vhost, a client publishes and consumes over amqplib, and the page
// shows the publish and the delivery. Runs against ./target.ts's broker (Warren in-process, or
// a reference RabbitMQ with WARREN_UI_TARGET: the page uses only RabbitMQ's API).

import { expect } from 'chai';
import type { BrowserContext, Page } from 'playwright-core';
import amqp from 'amqplib';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { serveUi, type UiServer } from './ui-server.js';
import { uiTarget, type UiTarget } from './target.js';
import { GUEST, launchChromium, skipWithoutChromium } from './browser.js';
import { makeTmpDir, removeDir } from '../support/tmp-dir.js';


describe('management web UI: tracing page (headless Chromium)', function () {
  this.timeout(60000);
  let target: UiTarget;
  let ui: UiServer;
  let context: BrowserContext;
  let page: Page;
  let profile: string;
  let shots: string;
  const pageErrors: string[] = [];
  const run = randomBytes(3).toString('hex');
  const queue = `ui-trace-${run}`;
  let conn: amqp.ChannelModel;
  let ch: amqp.Channel;

  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  const json = async (res: Promise<Response>): Promise<any> => (await res).json();
  const api = async (method: string, p: string, body?: unknown): Promise<Response> =>
    fetch(`${target.apiUrl}${p}`, { method, headers: { authorization: GUEST, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });

  before(async function () {
    const picked = await uiTarget();
    if ('skip' in picked) {
      console.log(`    (skipped: ${picked.skip})`);
      this.skip();
    }
    target = picked as UiTarget;
    await skipWithoutChromium(this, () => target.close());
    ui = target.pageUrl ? { url: target.pageUrl, close: async () => {} } : await serveUi(target.apiUrl);
    profile = makeTmpDir('warren-ui-profile-');
    shots = process.env.WARREN_UI_SCREENSHOTS ?? makeTmpDir('warren-ui-shots-');
    context = await launchChromium(profile);
    page = context.pages()[0] ?? (await context.newPage());
    page.setDefaultTimeout(20000);
    page.on('pageerror', (e) => pageErrors.push(e.message));
    conn = await amqp.connect(target.amqpUrl);
    ch = await conn.createChannel();
    await ch.assertQueue(queue, { durable: false });
  });

  after(async () => {
    if (ch) {
      await ch.deleteQueue(queue).catch(() => {});
      await conn.close().catch(() => {});
    }
    if (target) {
      await api('PUT', '/vhosts/%2F', { description: 'Default virtual host', tracing: false }).catch(() => {});
      await api('DELETE', '/queues/%2F/warren.ui.trace').catch(() => {});
    }
    await context?.close();
    await ui?.close();
    await target?.close();
    if (profile) removeDir(profile);
    if (shots && !process.env.WARREN_UI_SCREENSHOTS) removeDir(shots);
  });

  it('turns tracing on for a vhost and shows the latest publishes and deliveries made over AMQP', async () => {
    await page.goto(ui.url);
    await page.fill('input[name=username]', 'guest');
    await page.fill('input[name=password]', 'guest');
    await page.click('form.login-card button[type=submit]');
    await page.locator('.topbar .user-name', { hasText: 'guest' }).waitFor();
    await page.click('nav.nav a[data-page=tracing]');
    await page.locator('.page-header h1', { hasText: 'Tracing' }).waitFor();
    await page.locator('.trace-status', { hasText: 'tracing off' }).waitFor();
    const description = (await json(api('GET', '/vhosts/%2F'))).description;

    await page.click('button:has-text("Start tracing")');
    await page.locator('.trace-status', { hasText: 'tracing on' }).waitFor();
    // What the page did, seen over the API: tracing on (description kept), a bounded queue bound to the firehose.
    const vhost = await json(api('GET', '/vhosts/%2F'));
    expect({ tracing: vhost.tracing, description: vhost.description }).to.deep.equal({ tracing: true, description });
    const traceQueue = await json(api('GET', '/queues/%2F/warren.ui.trace'));
    expect(traceQueue.arguments).to.deep.equal({ 'x-max-length': 100 });
    const bindings = await json(api('GET', '/queues/%2F/warren.ui.trace/bindings')) as Array<{ source: string; routing_key: string }>;
    expect(bindings.map((b) => [b.source, b.routing_key])).to.deep.include(['amq.rabbitmq.trace', '#']);

    // A publish and a delivery over AMQP.
    ch.sendToQueue(queue, Buffer.from(`{"order":"${run}"}`), { contentType: 'application/json' });
    const got = await ch.get(queue, { noAck: true });
    expect(got && got.content.toString()).to.equal(`{"order":"${run}"}`);

    await page.click('.page-header button:has-text("Refresh")');
    const rows = page.locator('table[data-table=trace] tbody tr');
    const publish = rows.filter({ hasText: 'publish' }).filter({ hasText: run });
    const deliver = rows.filter({ hasText: 'deliver' }).filter({ hasText: run });
    await publish.waitFor();
    await deliver.waitFor();
    expect(await publish.locator('td').allInnerTexts()).to.deep.include.members(['publish', '(AMQP default)', queue]);
    expect(await publish.innerText()).to.contain(`{"order":"${run}"}`);
    expect(await deliver.innerText()).to.contain(queue);
    // Newest first: the delivery is the top row.
    expect(await rows.first().innerText()).to.contain('deliver');
    const file = join(shots, 'tracing.png');
    await page.screenshot({ path: file });
    expect(pageErrors).to.deep.equal([]);
  });

  it('stops tracing: the vhost is no longer traced and the queue is gone', async () => {
    await page.click('button:has-text("Stop tracing")');
    await page.locator('.trace-status', { hasText: 'tracing off' }).waitFor();
    expect((await json(api('GET', '/vhosts/%2F'))).tracing).to.equal(false);
    expect((await api('GET', '/queues/%2F/warren.ui.trace')).status).to.equal(404);
    await page.locator('table[data-table=trace] tbody tr', { hasText: 'No traced message yet.' }).waitFor();
    expect(pageErrors).to.deep.equal([]);
  });
});
