import { expect } from 'chai';
import { DESCRIPTIONS } from '../../src/management/api-reference.js';
import { ok } from '../../src/management/http.js';
import { useManagedBroker } from '../support/management.js';

/** The rows of the page's tables: the methods marked, the path, who may call it, what it does. */
function rows(html: string): Array<{ methods: string[]; path: string; who: string; what: string }> {
  const out = [];
  for (const m of html.matchAll(/<tr>((?:<td class="m">X?<\/td>){4})<td class="path">((?:[^<]|<wbr>)*)<\/td><td>([^<]*)<\/td><td>(.*?)<\/td><\/tr>/g)) {
    const marks = [...m[1]!.matchAll(/<td class="m">(X?)<\/td>/g)].map((x) => x[1]);
    // (A path may break after each slash.)
    out.push({ methods: ['GET', 'PUT', 'DELETE', 'POST'].filter((_, i) => marks[i] === 'X'), path: m[2]!.replaceAll('<wbr>', ''), who: m[3]!, what: m[4]! });
  }
  return out;
}

/**
 * /api/index.html, the API's reference page (RabbitMQ 3.10 serves its own there; /api, /api/ and
 * /doc/stats.html redirect to it, recorded from the reference): written from the routes the
 * server answers, so it lists exactly those.
 */
describe('management port: /api/index.html', function () {
  const b = useManagedBroker();
  const get = (path: string, init: RequestInit = {}) => fetch(b.base + path, { redirect: 'manual', ...init });

  it('every route the server answers has a description, and every description a route', () => {
    const paths = b.running.broker.management!.router.list().map((r) => r.path);
    expect(paths.filter((p) => DESCRIPTIONS[p] === undefined), 'routes without a description').to.deep.equal([]);
    expect(Object.keys(DESCRIPTIONS).filter((p) => !paths.includes(p)), 'descriptions of no route').to.deep.equal([]);
  });

  it('lists each route once, with its methods and who may call it, without credentials', async () => {
    const res = await get('/api/index.html');
    expect(res.status).to.equal(200);
    expect(res.headers.get('content-type')).to.equal('text/html; charset=utf-8');
    const html = await res.text();
    expect(html).to.contain('<title>Warren Management HTTP API</title>');
    const listed = rows(html);
    const routes = b.running.broker.management!.router.list();
    expect(listed.map((r) => r.path)).to.deep.equal(routes.filter((r) => !r.path.startsWith('/api/warren/')).concat(routes.filter((r) => r.path.startsWith('/api/warren/'))).map((r) => r.path));
    const row = (path: string) => listed.find((r) => r.path === path)!;
    expect(row('/api/queues/:vhost/:queue')).to.deep.include({ methods: ['GET', 'PUT', 'DELETE'], who: 'management, with access to the vhost' });
    expect(row('/api/exchanges/:vhost/:exchange/publish')).to.deep.include({ methods: ['POST'], who: 'management, with access to the vhost' });
    expect(row('/api/users/:user')).to.deep.include({ methods: ['GET', 'PUT', 'DELETE'], who: 'administrator' });
    expect(row('/api/cluster-name')).to.deep.include({ methods: ['GET', 'PUT'], who: 'GET: management; PUT: administrator' });
    expect(row('/api/auth')).to.deep.include({ methods: ['GET'], who: 'anyone' });
    expect(row('/api/warren/reset').what).to.contain('test toolkit');
    // What each row says works: the methods marked are the ones the server allows.
    for (const path of ['/api/queues/%2F/nothing', '/api/cluster-name', '/api/definitions']) {
      const allow = (await get(path, { method: 'OPTIONS' })).headers.get('allow')!;
      const pattern = routes.find((r) => new RegExp(`^${r.path.replace(/:[a-z]+/g, '[^/]+')}$`).test(path))!.path;
      expect(allow.split(', ').filter((m) => m !== 'HEAD' && m !== 'OPTIONS').sort(), path).to.deep.equal([...row(pattern).methods].sort());
    }
    expect(html).to.contain('href="/cli/"');
  });

  it('a route added to the running server is on the page', async () => {
    b.running.broker.management!.router.add({ path: '/api/added-later', access: 'monitor', GET: () => ok({}) });
    const added = rows(await (await get('/api/index.html')).text()).find((r) => r.path === '/api/added-later');
    expect(added).to.deep.equal({ methods: ['GET'], path: '/api/added-later', who: 'monitoring', what: '' });
  });

  it('/api, /api/ and /doc/stats.html redirect to it, whatever the method; it answers as a static file', async () => {
    for (const path of ['/api', '/api/', '/doc/stats.html']) {
      for (const method of ['GET', 'PUT', 'POST']) {
        const res = await get(path, { method });
        expect([path, method, res.status, res.headers.get('location')]).to.deep.equal([path, method, 301, '/api/index.html']);
      }
    }
    const options = await get('/api/index.html', { method: 'OPTIONS' });
    expect([options.status, options.headers.get('allow')]).to.deep.equal([200, 'HEAD, GET, OPTIONS']);
    const post = await get('/api/index.html', { method: 'POST' });
    expect([post.status, post.headers.get('allow')]).to.deep.equal([405, 'HEAD, GET, OPTIONS']);
    const head = await get('/api/index.html', { method: 'HEAD' });
    expect(head.status).to.equal(200);
    expect(await head.text()).to.equal('');
  });
});
