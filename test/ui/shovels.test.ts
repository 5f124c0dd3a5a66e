// The web UI's Shovels page (src/management/ui/pages/shovels.js) in headless Chromium against an
// in-process Warren: it lists a shovel defined over the API with its state and counts, a shovel
// added from the page moves messages (checked over AMQP), and deleting one stops it.

import { expect } from 'chai';
import type { BrowserContext, Page } from 'playwright-core';
import amqp from 'amqplib';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startBroker, type RunningBroker } from '../../src/broker.js';
import { GUEST, launchChromium, skipWithoutChromium } from './browser.js';
import { makeTmpDir, removeDir } from '../support/tmp-dir.js';


describe('web UI: the Shovels page (headless Chromium)', function () {
  this.timeout(60_000);
  let a: RunningBroker;
  let b: RunningBroker;
  let context: BrowserContext;
  let page: Page;
  let profile: string;
  const pageErrors: string[] = [];
  const api = (method: string, p: string, body?: unknown) =>
    fetch(`${a.managementUrl}/api${p}`, { method, headers: { authorization: GUEST, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });

  before(async function () {
    await skipWithoutChromium(this);
    a = await startBroker({ port: 0, managementPort: 0, logLevel: 'silent' });
    b = await startBroker({ port: 0, logLevel: 'silent' });
    profile = makeTmpDir('warren-ui-shovels-');
    context = await launchChromium(profile);
    page = context.pages()[0] ?? (await context.newPage());
    page.setDefaultTimeout(20_000);
    page.on('pageerror', (e) => pageErrors.push(e.message));
    await page.goto(`${a.managementUrl}/`);
    await page.fill('input[name=username]', 'guest');
    await page.fill('input[name=password]', 'guest');
    await page.click('form.login-card button[type=submit]');
    await page.locator('.topbar .user-name', { hasText: 'guest' }).waitFor();
    await page.selectOption('.refresh-select', '2000');
  });

  after(async () => {
    await context?.close();
    if (profile) removeDir(profile);
    await a?.close();
    await b?.close();
  });

  it('lists a running shovel with its endpoints and message counts, and one that cannot connect as starting (as RabbitMQ does)', async () => {
    const c = await amqp.connect(a.url);
    const ch = await c.createConfirmChannel();
    await ch.assertQueue('ui-src', { durable: true });
    for (let i = 0; i < 25; i++) ch.sendToQueue('ui-src', Buffer.from(String(i)), { persistent: true });
    await ch.waitForConfirms();
    await c.close();
    expect((await api('PUT', '/parameters/shovel/%2F/to-b', { value: { 'src-uri': 'amqp://', 'src-queue': 'ui-src', 'dest-uri': `amqp://guest:guest@127.0.0.1:${b.port}`, 'dest-queue': 'ui-dest' } })).status).to.equal(201);
    await b.until.queueLength('ui-dest', 25);
    // A destination nobody listens on: it never gets past starting.
    expect((await api('PUT', '/parameters/shovel/%2F/nowhere', { value: { 'src-uri': 'amqp://', 'src-queue': 'ui-src2', 'dest-uri': 'amqp://guest:guest@127.0.0.1:9', 'dest-queue': 'x', 'reconnect-delay': 60 } })).status).to.equal(201);
    await page.click('nav a[data-page=shovels]');
    const row = page.locator('table[data-table=shovels] tbody tr', { hasText: 'to-b' });
    await row.waitFor();
    await row.locator('.badge', { hasText: 'running' }).waitFor();
    expect(await row.textContent()).to.contain(`amqp://127.0.0.1:${b.port}`).and.to.contain('ui-src').and.to.contain('ui-dest');
    // Forwarded and acked: 25 each.
    await page.waitForFunction(`[...document.querySelectorAll('table[data-table=shovels] tbody tr')].some((tr) => tr.textContent.includes('to-b') && [...tr.querySelectorAll('td')].filter((td) => td.textContent.trim() === '25').length === 2)`);
    const other = page.locator('table[data-table=shovels] tbody tr', { hasText: 'nowhere' });
    await other.locator('.badge', { hasText: 'starting' }).waitFor();
    const shots = process.env.WARREN_UI_SCREENSHOTS ?? tmpdir();
    await page.screenshot({ path: join(shots, 'shovels.png') });
    expect((await api('DELETE', '/parameters/shovel/%2F/nowhere')).status).to.equal(204);
    await other.waitFor({ state: 'detached' });
  });

  it("the Connections page shows a shovel's direct connection under the shovel's name, as direct", async () => {
    await page.click('nav a[data-page=connections]');
    const row = page.locator('table[data-table=connections] tbody tr', { hasText: 'Shovel to-b' });
    await row.locator('.badge', { hasText: 'direct' }).waitFor();
    // Named as RabbitMQ names it (a process), run as its user none.
    expect(await row.textContent()).to.match(/<rabbit@[^>]+\.0>/).and.to.contain('Direct 0-9-1').and.to.contain('none');
    await row.locator('td').first().click();
    await page.locator('h1', { hasText: 'Shovel to-b' }).waitFor();
    expect(await page.locator('dl.props').first().textContent()).to.contain('Direct 0-9-1');
    await page.click('nav a[data-page=shovels]');
    await page.locator('table[data-table=shovels] tbody tr', { hasText: 'to-b' }).waitFor();
  });

  it('adds a shovel from the form, which moves messages, and deletes one after confirming', async () => {
    const c = await amqp.connect(a.url);
    const ch = await c.createConfirmChannel();
    await ch.assertQueue('form-src', { durable: true });
    for (let i = 0; i < 10; i++) ch.sendToQueue('form-src', Buffer.from(`m${i}`), { persistent: true });
    await ch.waitForConfirms();
    await c.close();
    await page.fill('form input[name=name]', 'from-form');
    await page.fill('form input[name=src-queue]', 'form-src');
    await page.fill('form input[name=dest-uri]', `amqp://guest:guest@127.0.0.1:${b.port}`);
    await page.fill('form input[name=dest-queue]', 'form-dest');
    await page.selectOption('form select[name=src-delete-after]', 'queue-length');
    await page.click('form button[type=submit]');
    await b.until.queueLength('form-dest', 10);
    const bc = await amqp.connect(b.url);
    const bch = await bc.createChannel();
    const got: string[] = [];
    for (let m = await bch.get('form-dest', { noAck: true }); m; m = await bch.get('form-dest', { noAck: true })) got.push(m.content.toString());
    await bc.close();
    expect(got).to.deep.equal(Array.from({ length: 10 }, (_, i) => `m${i}`));
    // queue-length: it deleted itself once done, and the page drops it.
    await page.locator('table[data-table=shovels] tbody tr', { hasText: 'from-form' }).waitFor({ state: 'detached' });

    const row = page.locator('table[data-table=shovels] tbody tr', { hasText: 'to-b' });
    await row.locator('button', { hasText: 'Delete' }).click();
    await page.locator('dialog[open] button', { hasText: 'Delete shovel' }).click();
    await row.waitFor({ state: 'detached' });
    expect(await (await api('GET', '/shovels')).json()).to.deep.equal([]);
    expect(await (await api('GET', '/parameters/shovel')).json()).to.deep.equal([]);
  });

  it('raised no script error', () => {
    expect(pageErrors).to.deep.equal([]);
  });
});
