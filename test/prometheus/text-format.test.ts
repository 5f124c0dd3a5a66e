import { expect } from 'chai';
import { acceptsGzip } from '../../src/prometheus/prometheus-server.js';
import { Exposition, escapeLabelValue, formatValue, labels } from '../../src/prometheus/text-format.js';
import { parseFamilies } from '../metrics/prometheus-text.js';

/** The text exposition format 0.0.4 as Warren writes it, read back by an npm parser. */
describe('Prometheus text format (src/prometheus/text-format.ts)', () => {
  it('TYPE, HELP and samples; a family without samples keeps its TYPE and HELP', () => {
    const out = new Exposition();
    out.family('a_total', 'counter', 'Some counter', [[labels(['vhost', '/'], ['queue', 'q']), 3], ['', 4]]);
    out.family('b', 'gauge', 'Nothing yet', []);
    expect(out.pending).to.equal(4);
    const text = out.take();
    expect(out.pending).to.equal(0);
    expect(text).to.equal(
      '# TYPE a_total counter\n# HELP a_total Some counter\na_total{vhost="/",queue="q"} 3\na_total 4\n# TYPE b gauge\n# HELP b Nothing yet\n',
    );
    expect(parseFamilies(text).map((f) => [f.name, f.type, f.metrics.length])).to.deep.equal([['a_total', 'COUNTER', 2], ['b', 'GAUGE', 0]]);
  });

  it('escapes backslash, double quote and line feed in label values, backslash and line feed in help', () => {
    expect(escapeLabelValue('a\\b"c\nd')).to.equal('a\\\\b\\"c\\nd');
    const out = new Exposition();
    const name = 'odd "queue" \\ with\nnewline';
    out.family('x', 'gauge', 'two\nlines \\ here', [[labels(['queue', name]), 1]]);
    const text = out.take();
    const [f] = parseFamilies(text);
    expect(text).to.include('# HELP x two\\nlines \\\\ here\n');
    expect(f!.metrics[0]!.labels).to.deep.equal({ queue: name });
  });

  it('numbers: integers and decimals as JavaScript prints them, NaN and infinities as the format spells them', () => {
    expect([0, 42, 67.532, 7e-5, NaN, Infinity, -Infinity].map(formatValue)).to.deep.equal(['0', '42', '67.532', '0.00007', 'NaN', '+Inf', '-Inf']);
  });

  it('gzip when Accept-Encoding allows it (q > 0), identity otherwise', () => {
    expect(acceptsGzip(undefined)).to.equal(false);
    expect(acceptsGzip('gzip')).to.equal(true);
    expect(acceptsGzip('deflate, gzip;q=0.5')).to.equal(true);
    expect(acceptsGzip('gzip;q=0')).to.equal(false);
    expect(acceptsGzip('identity')).to.equal(false);
    expect(acceptsGzip('*')).to.equal(true);
  });
});
