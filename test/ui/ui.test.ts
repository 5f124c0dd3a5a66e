// The management web UI (src/management/ui) in headless Chromium, driven as a user drives it,
// with what it does checked over AMQP (amqplib) and over the management API (fetch).
// One browser for the file; the broker is chosen by ./target.ts.

import { expect } from 'chai';
import type { BrowserContext, Page } from 'playwright-core';
import amqp from 'amqplib';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { inflateSync } from 'node:zlib';
import { randomBytes } from 'node:crypto';
import { serveUi, type UiServer } from './ui-server.js';
import { uiTarget, type UiTarget } from './target.js';
import { GUEST, launchChromium, skipWithoutChromium } from './browser.js';
import { makeTmpDir, removeDir } from '../support/tmp-dir.js';


/** A PNG's size, and the share of its (filtered) pixel bytes that are not zero: ~0 for a blank image. */
function pngFacts(file: string): { width: number; height: number; bytes: number; inked: number } {
  const png = readFileSync(file);
  expect(png.subarray(0, 8).toString('hex')).to.equal('89504e470d0a1a0a');
  let off = 8;
  let width = 0;
  let height = 0;
  const idat: Buffer[] = [];
  while (off < png.length) {
    const len = png.readUInt32BE(off);
    const type = png.toString('latin1', off + 4, off + 8);
    const data = png.subarray(off + 8, off + 8 + len);
    if (type === 'IHDR') {
      width = data.readUInt32BE(0);
      height = data.readUInt32BE(4);
    } else if (type === 'IDAT') idat.push(data);
    off += 12 + len;
  }
  const raw = inflateSync(Buffer.concat(idat));
  let nonzero = 0;
  for (const b of raw) if (b !== 0) nonzero++;
  return { width, height, bytes: png.length, inked: nonzero / raw.length };
}

describe('management web UI (headless Chromium)', function () {
  this.timeout(60000);
  let target: UiTarget;
  let ui: UiServer;
  let context: BrowserContext;
  let page: Page;
  let profile: string;
  let shots: string;
  const pageErrors: string[] = [];
  const run = randomBytes(3).toString('hex');
  const queue = `ui-test-${run}-orders`;
  const other = `ui-test-${run}-billing`;
  let conn: amqp.ChannelModel;
  let ch: amqp.Channel;

  const api = async (method: string, p: string, body?: unknown): Promise<Response> =>
    fetch(`${target.apiUrl}${p}`, { method, headers: { authorization: GUEST, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
  const go = async (hash: string): Promise<void> => {
    await page.evaluate(`location.hash = ${JSON.stringify(hash)}`);
  };
  const toast = (text: string | RegExp) => page.locator('#toasts .toast', { hasText: text });

  before(async function () {
    const picked = await uiTarget();
    if ('skip' in picked) {
      console.log(`    (skipped: ${picked.skip})`);
      this.skip();
    }
    target = picked as UiTarget;
    await skipWithoutChromium(this, () => target.close());
    // Warren serves the UI itself; a reference RabbitMQ's API gets the UI served beside it.
    ui = target.pageUrl ? { url: target.pageUrl, close: async () => {} } : await serveUi(target.apiUrl);
    profile = makeTmpDir('warren-ui-profile-');
    shots = process.env.WARREN_UI_SCREENSHOTS ?? makeTmpDir('warren-ui-shots-');
    context = await launchChromium(profile, { acceptDownloads: true });
    page = context.pages()[0] ?? (await context.newPage());
    page.setDefaultTimeout(20000);
    page.on('pageerror', (e) => pageErrors.push(e.message));
    conn = await amqp.connect(target.amqpUrl);
    ch = await conn.createChannel();
    await ch.assertQueue(queue, { durable: true });
    await ch.assertQueue(other, { durable: false });
  });

  after(async () => {
    if (ch) {
      await ch.deleteQueue(queue).catch(() => {});
      await ch.deleteQueue(other).catch(() => {});
      await ch.deleteExchange(`ui-test-${run}-x`).catch(() => {});
      await conn.close().catch(() => {});
    }
    await context?.close();
    await ui?.close();
    await target?.close();
    if (profile) removeDir(profile);
    if (shots && !process.env.WARREN_UI_SCREENSHOTS) removeDir(shots);
  });

  it('logs in against /api/whoami, shows the API reason for bad credentials, and keeps the session in the tab', async () => {
    await page.goto(ui.url);
    await page.fill('input[name=username]', 'guest');
    await page.fill('input[name=password]', 'not-the-password');
    await page.click('form.login-card button[type=submit]');
    await page.locator('.login-error', { hasText: 'Login failed' }).waitFor();
    await page.fill('input[name=password]', 'guest');
    await page.click('form.login-card button[type=submit]');
    await page.locator('.topbar .user-name', { hasText: 'guest' }).waitFor();
    expect(await page.evaluate(`sessionStorage.getItem('warren.auth')`)).to.equal(Buffer.from('guest:guest').toString('base64'));
    // Poll every 2 s from here on, so lists catch up with AMQP-side changes sooner.
    await page.selectOption('.refresh-select', '2000');
    await page.reload();
    await page.locator('.topbar .user-name', { hasText: 'guest' }).waitFor();
    expect(await page.locator('form.login-card').count()).to.equal(0);
  });

  it('lists a queue declared over AMQP, and the screenshot shows it', async () => {
    await go('#/queues');
    const row = page.locator('table[data-table=queues] tbody tr', { hasText: queue });
    await row.waitFor();
    expect(await row.isVisible()).to.equal(true);
    expect(await row.locator('a.row-link').getAttribute('href')).to.equal(`#/queues/%2F/${queue}`);
    const box = await row.boundingBox();
    expect(box && box.y >= 0 && box.y + box.height <= 800, 'the row is inside the viewport').to.equal(true);
    const file = join(shots, 'queues.png');
    await page.screenshot({ path: file });
    expect(await row.isVisible()).to.equal(true);
    const png = pngFacts(file);
    expect(png.width).to.equal(1280);
    expect(png.height).to.equal(800);
    expect(png.bytes).to.be.greaterThan(10000);
    expect(png.inked).to.be.greaterThan(0.01);
  });

  it('filters the queue list instantly, by substring and by regular expression, and Enter opens the first match', async () => {
    await go('#/queues');
    const rows = page.locator('table[data-table=queues] tbody tr');
    const mine = page.locator('table[data-table=queues] tbody tr', { hasText: queue });
    const theirs = page.locator('table[data-table=queues] tbody tr', { hasText: other });
    await theirs.waitFor();
    await page.fill('input[data-filter]', `${run}-ord`);
    await theirs.waitFor({ state: 'detached' });
    expect(await rows.count()).to.equal(1);
    await mine.waitFor();
    await page.click('.filter-regex');
    await page.fill('input[data-filter]', `^ui-test-${run}-(billing|nothing)$`);
    await mine.waitFor({ state: 'detached' });
    await theirs.waitFor();
    expect(await rows.count()).to.equal(1);
    await page.fill('input[data-filter]', '([');
    await page.locator('.filter-hint', { hasText: 'invalid regular expression' }).waitFor();
    await page.fill('input[data-filter]', `${run}-or.ers$`);
    await mine.waitFor();
    expect(page.url()).to.contain('filter=');
    await page.press('input[data-filter]', 'Enter');
    await page.waitForFunction(`location.hash === ${JSON.stringify(`#/queues/%2F/${queue}`)}`);
    await page.locator('.page-header h1', { hasText: queue }).waitFor();
  });

  it('sorts the queue list by a column, both ways', async () => {
    for (let i = 0; i < 3; i++) ch.sendToQueue(other, Buffer.from(`b${i}`));
    await go(`#/queues?filter=${run}`);
    const first = page.locator('table[data-table=queues] tbody tr').first();
    // Counts can lag the broker by a stats interval (RabbitMQ's do): wait until the list shows them.
    await page.locator('table[data-table=queues] tbody tr', { hasText: other }).locator('td.num', { hasText: /^3$/ }).first().waitFor();
    await page.click('table[data-table=queues] th button:has-text("Ready")');
    expect(await page.getAttribute('table[data-table=queues] th:has(button:has-text("Ready"))', 'aria-sort')).to.equal('descending');
    expect(await first.innerText()).to.contain(other);
    await page.click('table[data-table=queues] th button:has-text("Ready")');
    expect(await first.innerText()).to.contain(queue);
    await ch.purgeQueue(other);
  });

  it('is usable from the keyboard: / focuses the filter, arrows move through rows, Enter opens, g o goes to the overview', async () => {
    await go('#/queues');
    await page.locator('table[data-table=queues] tbody tr', { hasText: queue }).waitFor();
    await page.focus('.main');
    await page.keyboard.press('/');
    expect(await page.evaluate(`document.activeElement?.matches('[data-filter]')`)).to.equal(true);
    await page.keyboard.type(`${run}-ord`);
    await page.locator('table[data-table=queues] tbody tr', { hasText: other }).waitFor({ state: 'detached' });
    await page.keyboard.press('ArrowDown');
    expect(await page.evaluate(`document.activeElement?.textContent`)).to.equal(queue);
    await page.keyboard.press('ArrowUp');
    expect(await page.evaluate(`document.activeElement?.matches('[data-filter]')`)).to.equal(true);
    await page.keyboard.press('ArrowDown');
    await page.keyboard.press('Enter');
    await page.locator('.page-header h1', { hasText: queue }).waitFor();
    await page.focus('.main');
    await page.keyboard.press('g');
    await page.keyboard.press('o');
    await page.locator('.page-header h1', { hasText: 'Overview' }).waitFor();
  });

  it('adds a binding to a queue and removes it', async () => {
    const exchange = `ui-test-${run}-topic`;
    await ch.assertExchange(exchange, 'topic', { durable: false });
    await go(`#/queues/%2F/${encodeURIComponent(queue)}`);
    const form = page.locator('form.bind-form');
    await form.locator('input[name=source]').fill(exchange);
    await form.locator('input[name=routing_key]').fill('order.*.eu');
    await form.locator('button[type=submit]').click();
    const row = page.locator('.bindings-list tr', { hasText: 'order.*.eu' });
    await row.waitFor();
    const bound = (await (await api('GET', `/queues/%2F/${encodeURIComponent(queue)}/bindings`)).json()) as { source: string; routing_key: string }[];
    expect(bound.some((b) => b.source === exchange && b.routing_key === 'order.*.eu')).to.equal(true);
    await row.locator('button:has-text("Unbind")').click();
    await page.click('dialog[open] button:has-text("Unbind")');
    await row.waitFor({ state: 'detached' });
    const after = (await (await api('GET', `/queues/%2F/${encodeURIComponent(queue)}/bindings`)).json()) as { source: string }[];
    expect(after.some((b) => b.source === exchange)).to.equal(false);
    await ch.deleteExchange(exchange);
  });

  it('gets a message published over AMQP and shows its payload, properties and redelivered flag', async () => {
    ch.sendToQueue(queue, Buffer.from(JSON.stringify({ order: 42, item: 'teapot' })), { contentType: 'application/json', headers: { 'x-tenant': 'acme' }, messageId: 'm-42' });
    await go(`#/queues/%2F/${encodeURIComponent(queue)}`);
    await page.locator('.page-header h1', { hasText: queue }).waitFor();
    await page.fill('input[name=count]', '1');
    await page.selectOption('select[name=ackmode]', 'ack_requeue_true');
    await page.click('form.get-form button[type=submit]');
    const msg = page.locator('.message').first();
    await msg.waitFor();
    expect(await msg.locator('pre.payload').innerText()).to.equal(JSON.stringify({ order: 42, item: 'teapot' }, null, 2));
    expect(await msg.locator('.message-head').innerText()).to.contain('first delivery');
    const props = await msg.locator('.message-props').innerText();
    expect(props).to.contain('application/json').and.to.contain('m-42').and.to.contain('x-tenant').and.to.contain('acme');
    // Peeking requeued it: the next get sees it redelivered.
    await page.click('form.get-form button[type=submit]');
    await page.locator('.message .badge', { hasText: 'redelivered' }).waitFor();
  });

  it('shows the dead-letters a quorum queue holds at least once', async () => {
    const held = `ui-test-${run}-held`;
    const dlx = `ui-test-${run}-dlx`;
    await ch.assertExchange(dlx, 'fanout', { durable: true });
    await ch.assertQueue(held, {
      durable: true,
      arguments: { 'x-queue-type': 'quorum', 'x-dead-letter-exchange': dlx, 'x-dead-letter-strategy': 'at-least-once', 'x-overflow': 'reject-publish' },
    });
    try {
      ch.sendToQueue(held, Buffer.from('nowhere to go'));
      const m = await ch.get(held, { noAck: false });
      if (m === false) throw new Error('the message did not arrive');
      ch.nack(m, false, false);
      await go(`#/queues/%2F/${encodeURIComponent(held)}`);
      // RabbitMQ's API reports queue figures after its next statistics tick.
      await page.locator('.tile[data-tile=dead-lettered] .tile-value', { hasText: /^1$/ }).waitFor();
      expect(await page.locator('.tile[data-tile=total] .tile-value').innerText()).to.equal('1');
    } finally {
      await ch.deleteQueue(held);
      await ch.deleteExchange(dlx);
    }
  });

  it('lists a queue\'s consumers with each tag whole on one line', async () => {
    const consumer = await conn.createChannel();
    try {
      await consumer.prefetch(20);
      await consumer.consume(other, () => {}, { consumerTag: 'billing-worker', arguments: { 'x-priority': 5 } });
      const generated = (await consumer.consume(other, () => {})).consumerTag;
      await go(`#/queues/%2F/${encodeURIComponent(other)}`);
      const card = page.locator('.card', { has: page.locator('.card-title', { hasText: 'Consumers' }) });
      const rows = card.locator('tbody tr');
      await rows.nth(1).waitFor();
      expect(await rows.locator('td:nth-child(2) code').allInnerTexts()).to.have.members(['billing-worker', generated]);
      expect(await rows.locator('td:nth-child(3)').allInnerTexts()).to.deep.equal(['20', '20']);
      // Each tag on one line (it used to wrap a syllable a line), and the table fits the card.
      for (const tag of ['billing-worker', generated]) {
        // An inline element has a box per line it takes.
        expect(await card.locator('code', { hasText: tag }).evaluate((el) => el.getClientRects().length), tag).to.equal(1);
      }
      expect(await card.locator('.scroll-x').evaluate((el) => el.scrollWidth <= el.clientWidth)).to.equal(true);
      await page.screenshot({ path: join(shots, 'queue-consumers.png') });
    } finally {
      await consumer.close();
    }
  });

  it('links the API\'s reference page and rabbitmqadmin from its footer, as RabbitMQ\'s does', async function () {
    const links = page.locator('footer.footer a');
    expect(await links.allInnerTexts()).to.deep.equal(['HTTP API', 'rabbitmqadmin']);
    if (!target.pageUrl) return; // the UI served beside a reference's API: its links are the test server's
    const [api, cli] = await Promise.all([links.nth(0), links.nth(1)].map((l) => l.evaluate((a) => (a as unknown as { href: string }).href)));
    const apiPage = await context.newPage();
    await apiPage.goto(api!);
    expect(await apiPage.title()).to.equal('Warren Management HTTP API');
    expect(await apiPage.locator('td.path', { hasText: '/api/queues/:vhost/:queue/get' }).count()).to.equal(1);
    await apiPage.goto(cli!);
    expect(await apiPage.title()).to.equal('rabbitmqadmin');
    const download = apiPage.waitForEvent('download');
    await apiPage.click('a[href="rabbitmqadmin"]');
    const file = await (await download).path();
    expect(readFileSync(file!, 'utf8')).to.contain("VERSION = '3.10.8'");
    await apiPage.close();
  });

  it('purges the queue after confirming', async () => {
    await go(`#/queues/%2F/${encodeURIComponent(queue)}`);
    await page.locator('.page-header h1', { hasText: queue }).waitFor();
    await page.click('.page-actions button:has-text("Purge")');
    await page.locator('dialog[open]', { hasText: 'Purge queue' }).waitFor();
    await page.click('dialog[open] button:has-text("Purge")');
    await toast(`Queue ${queue} purged`).waitFor();
    expect((await ch.checkQueue(queue)).messageCount).to.equal(0);
    await page.click('form.get-form button[type=submit]');
    await page.locator('.messages .empty-note', { hasText: 'empty' }).waitFor();
  });

  it('publishes from the exchange page: the message arrives over AMQP, and an unroutable one says so', async () => {
    const exchange = `ui-test-${run}-x`;
    await ch.assertExchange(exchange, 'direct', { durable: false });
    await ch.bindQueue(queue, exchange, 'to-orders');
    const arrived = new Promise<amqp.ConsumeMessage>((resolve) => {
      void ch.consume(queue, (m) => m && resolve(m), { noAck: true });
    });
    await go('#/exchanges');
    await page.locator('table[data-table=exchanges] tbody tr', { hasText: exchange }).locator('a.row-link').click();
    await page.locator('.page-header h1', { hasText: exchange }).waitFor();
    const form = page.locator('form.publish-form');
    await form.locator('input[name=routing_key]').fill('to-orders');
    await form.locator('textarea[name=payload]').fill('hello from the UI');
    await form.locator('input[name=content_type]').fill('text/plain');
    await form.locator('input[name=persistent]').check();
    await form.locator('summary').click();
    await form.locator('.kv-key').first().fill('x-origin');
    await form.locator('.kv-value').first().fill('browser');
    await form.locator('input[name=correlation_id]').fill('corr-7');
    await form.locator('button[type=submit]').click();
    await form.locator('.publish-result', { hasText: 'routed' }).waitFor();
    const m = await arrived;
    expect(m.content.toString()).to.equal('hello from the UI');
    expect(m.fields.exchange).to.equal(exchange);
    expect(m.fields.routingKey).to.equal('to-orders');
    expect(m.properties.contentType).to.equal('text/plain');
    expect(m.properties.deliveryMode).to.equal(2);
    expect(m.properties.correlationId).to.equal('corr-7');
    expect(m.properties.headers).to.deep.include({ 'x-origin': 'browser' });
    await form.locator('input[name=routing_key]').fill('nobody-listens');
    await form.locator('button[type=submit]').click();
    await form.locator('.publish-result', { hasText: 'not routed' }).waitFor();
  });

  it('closes a connection with a reason, and amqplib sees 320 CONNECTION_FORCED with it', async () => {
    const name = `ui-test-${run}-conn`;
    const victim = await amqp.connect(target.amqpUrl, { clientProperties: { connection_name: name } });
    // amqplib reports CONNECTION_FORCED as the error of its 'close' event (it is not 'fatal').
    const closed = new Promise<Error | undefined>((resolve) => victim.on('close', resolve));
    await go('#/connections');
    await page.fill('input[data-filter]', name);
    const row = page.locator('table[data-table=connections] tbody tr', { hasText: name });
    await row.waitFor();
    await row.locator('button:has-text("Close")').click();
    const dialog = page.locator('dialog[open]', { hasText: 'Close connection' });
    await dialog.locator('input[name=reason]').fill('closed by the UI test');
    await dialog.locator('button:has-text("Close connection")').click();
    const err = await closed;
    expect(err?.message).to.contain('320 (CONNECTION-FORCED)').and.to.contain('closed by the UI test');
    await toast('Connection closed').waitFor();
    await row.waitFor({ state: 'detached' });
  });

  it('shows the API reason when a request is refused', async () => {
    await go('#/queues');
    await page.click('.page-actions button:has-text("Add queue")');
    await page.fill('.collapsible input[name=name]', `ui-test-${run}-bad`);
    await page.locator('.collapsible .kv-key').first().fill('x-message-ttl');
    await page.locator('.collapsible .kv-value').first().fill('"soon"');
    await page.click('.collapsible button[type=submit]');
    await toast(/Adding the queue: .*x-message-ttl/).waitFor();
  });

  it('creates a user (with tags) and a vhost (with access for its creator) in admin, then deletes both', async () => {
    const user = `ui-test-${run}-user`;
    const vhost = `ui-test-${run}-vhost`;
    await go('#/admin/users');
    await page.fill('input[name=username]', user);
    await page.fill('input[name=password]', 's3cret!');
    await page.check('input[name=tag][value=monitoring]');
    await page.click('button[type=submit]:has-text("Add user")');
    const userRow = page.locator('table[data-table=users] tbody tr', { hasText: user });
    await userRow.waitFor();
    expect(await userRow.innerText()).to.contain('monitoring').and.to.contain('management');
    const who = await fetch(`${target.apiUrl}/whoami`, { headers: { authorization: `Basic ${Buffer.from(`${user}:s3cret!`).toString('base64')}` } });
    expect(who.status).to.equal(200);
    expect(((await who.json()) as { tags: string[] }).tags).to.have.members(['monitoring', 'management']);

    await go('#/admin/vhosts');
    await page.fill('input[name=vhost]', vhost);
    await page.click('button[type=submit]:has-text("Add vhost")');
    const vhostRow = page.locator('table[data-table=vhosts] tbody tr', { hasText: vhost });
    await vhostRow.waitFor();
    const url = new URL(target.amqpUrl);
    url.pathname = `/${encodeURIComponent(vhost)}`;
    const inVhost = await amqp.connect(url.href);
    await inVhost.close();
    expect(await page.locator('.vhost-select option', { hasText: vhost }).count()).to.equal(1);

    await vhostRow.locator('button:has-text("Delete")').click();
    const dialog = page.locator('dialog[open]', { hasText: 'Delete virtual host' });
    await dialog.locator('input.confirm-typed').fill(vhost);
    await dialog.locator('button:has-text("Delete vhost")').click();
    await vhostRow.waitFor({ state: 'detached' });
    expect((await api('GET', `/vhosts/${encodeURIComponent(vhost)}`)).status).to.equal(404);

    await go('#/admin/users');
    await userRow.locator('button:has-text("Delete")').click();
    await page.click('dialog[open] button:has-text("Delete user")');
    await userRow.waitFor({ state: 'detached' });
    expect((await api('GET', `/users/${encodeURIComponent(user)}`)).status).to.equal(404);
  });

  it('edits a user\'s tags keeping the password, sets and clears permissions', async () => {
    const user = `ui-test-${run}-perm`;
    const login = { authorization: `Basic ${Buffer.from(`${user}:pw-1`).toString('base64')}` };
    expect((await api('PUT', `/users/${user}`, { password: 'pw-1', tags: 'management' })).status).to.equal(201);
    try {
      await go('#/admin/users');
      const row = page.locator('table[data-table=users] tbody tr', { hasText: user });
      await row.locator('button:has-text("Edit")').click();
      const dialog = page.locator('dialog[open]', { hasText: `Edit user ${user}` });
      await dialog.locator('input[name=tag][value=policymaker]').check();
      await dialog.locator('button:has-text("Save")').click();
      await toast(`User ${user} updated`).waitFor();
      const who = await fetch(`${target.apiUrl}/whoami`, { headers: login });
      expect(who.status, 'the password still works').to.equal(200);
      expect(((await who.json()) as { tags: string[] }).tags).to.have.members(['management', 'policymaker']);

      await go('#/admin/permissions');
      await page.locator(`select[name=user] option[value="${user}"]`).waitFor({ state: 'attached' });
      await page.selectOption('select[name=user]', user);
      await page.selectOption('select[name=vhost]', '/');
      await page.fill('input[name=configure]', '^$');
      await page.click('button[type=submit]:has-text("Set permissions")');
      const permRow = page.locator('table[data-table=permissions] tbody tr', { hasText: user });
      await permRow.waitFor();
      const perm = (await (await api('GET', `/permissions/%2F/${user}`)).json()) as Record<string, string>;
      expect(perm).to.include({ user, vhost: '/', configure: '^$', write: '.*', read: '.*' });
      await permRow.locator('button:has-text("Clear")').click();
      await page.click('dialog[open] button:has-text("Clear")');
      await permRow.waitFor({ state: 'detached' });
      expect((await api('GET', `/permissions/%2F/${user}`)).status).to.equal(404);
    } finally {
      await api('DELETE', `/users/${user}`);
    }
  });

  it('adds a policy that the queue then shows, and deletes it', async () => {
    const name = `ui-test-${run}-ttl`;
    await go('#/admin/policies');
    await page.fill('input[name=name]', name);
    await page.fill('input[name=pattern]', `^ui-test-${run}-orders$`);
    await page.selectOption('select[name=apply-to]', 'queues');
    await page.fill('input[name=priority]', '3');
    await page.locator('[data-kv=policy-definition] .kv-key').first().fill('message-ttl');
    await page.locator('[data-kv=policy-definition] .kv-value').first().fill('60000');
    await page.click('button[type=submit]:has-text("Save policy")');
    const row = page.locator('table[data-table=policies] tbody tr', { hasText: name });
    await row.waitFor();
    const saved = (await (await api('GET', `/policies/%2F/${name}`)).json()) as Record<string, unknown>;
    expect(saved).to.deep.include({ pattern: `^ui-test-${run}-orders$`, 'apply-to': 'queues', priority: 3, definition: { 'message-ttl': 60000 } });
    await go(`#/queues/%2F/${encodeURIComponent(queue)}`);
    await page.locator('.page-sub .badge-policy', { hasText: name }).waitFor();
    await go('#/admin/policies');
    await row.locator('button:has-text("Delete")').click();
    await page.click('dialog[open] button:has-text("Delete policy")');
    await row.waitFor({ state: 'detached' });
    expect((await api('GET', `/policies/%2F/${name}`)).status).to.equal(404);
  });

  it('exports the definitions as a JSON download and imports a definitions file', async () => {
    await go('#/admin/definitions');
    const [download] = await Promise.all([page.waitForEvent('download'), page.click('button:has-text("Download definitions")')]);
    const exported = JSON.parse(readFileSync((await download.path()) as string, 'utf8')) as { queues: { name: string }[]; users: { name: string }[] };
    expect(download.suggestedFilename()).to.match(/^definitions_\d{4}-\d\d-\d\d\.json$/);
    expect(exported.queues.map((q) => q.name)).to.include(queue);
    expect(exported.users.map((u) => u.name)).to.include('guest');

    const imported = `ui-test-${run}-imported`;
    const defs = { queues: [{ name: imported, vhost: '/', durable: true, auto_delete: false, arguments: { 'x-max-length': 10 } }] };
    await page.setInputFiles('input[name=file]', { name: 'defs.json', mimeType: 'application/json', buffer: Buffer.from(JSON.stringify(defs)) });
    await page.locator('.def-info', { hasText: '1 queue' }).waitFor();
    await page.click('button:has-text("Import definitions")');
    await page.locator('.def-info', { hasText: 'Imported' }).waitFor();
    expect((await ch.checkQueue(imported)).messageCount).to.equal(0);
    await ch.deleteQueue(imported);
  });

  it('shows totals, charts the samples it polls, and the node', async () => {
    await go('#/');
    await page.locator('.tile[data-tile=queues] .tile-value').waitFor();
    const queues = Number((await page.locator('.tile[data-tile=queues] .tile-value').innerText()).replace(/,/g, ''));
    expect(queues).to.be.greaterThan(0);
    // Two samples make a line.
    const line = page.locator('figure[aria-label="Queued messages chart"] path.chart-line').first();
    await line.waitFor({ state: 'attached' });
    expect(((await line.getAttribute('d')) ?? '').match(/[ML]/g)?.length).to.be.greaterThan(1);
    await page.locator('.node .badge', { hasText: /no alarms|alarm/ }).waitFor();
    expect(await page.locator('.card', { hasText: 'Listeners' }).locator('tbody tr').count()).to.be.greaterThan(0);
  });

  it('fits a narrow window: the queue list keeps names and counts on screen without sideways scrolling', async () => {
    await page.setViewportSize({ width: 400, height: 800 });
    try {
      await go(`#/queues?filter=${run}`);
      const row = page.locator('table[data-table=queues] tbody tr', { hasText: queue });
      await row.waitFor();
      expect(await page.evaluate('document.documentElement.scrollWidth <= window.innerWidth')).to.equal(true);
      const total = row.locator('td strong');
      const box = await total.boundingBox();
      expect(box && box.x + box.width <= 400, 'the Total column is on screen').to.equal(true);
      expect(await page.locator('.nav a', { hasText: 'Admin' }).isVisible()).to.equal(true);
    } finally {
      await page.setViewportSize({ width: 1280, height: 800 });
    }
  });

  it('logs out: the credentials are forgotten and the login form is back', async () => {
    await page.click('.topbar button:has-text("Log out")');
    await page.locator('form.login-card', { hasText: 'You are logged out' }).waitFor();
    expect(await page.evaluate(`sessionStorage.getItem('warren.auth')`)).to.equal(null);
    await page.reload();
    await page.locator('form.login-card').waitFor();
  });

  it('raised no script error on any page', () => {
    expect(pageErrors).to.deep.equal([]);
  });
});
