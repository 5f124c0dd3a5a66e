// A small time-series line chart in inline SVG: gridlines, one line (and soft area) per series,
// a legend with the latest values, and a hover readout. No library.

import { h, s, fill } from './dom.js';
import { compact } from './format.js';

/**
 * lineChart({ title, format, height }) → { el, update(series) }
 * series: [{ label, points: [{ t (ms), v }] }]; colours come from the stylesheet (.series-N).
 */
export function lineChart({ title, format = compact, height = 150, ariaLabel } = {}) {
  const svgBox = h('div', { class: 'chart-plot' });
  const legend = h('div', { class: 'chart-legend' });
  const el = h('figure', { class: 'chart', 'aria-label': ariaLabel ?? title }, h('figcaption', { class: 'chart-title' }, title), svgBox, legend);
  let series = [];
  let hover = null; // index into the time axis
  let width = 0;

  function times() {
    const all = new Set();
    for (const sr of series) for (const p of sr.points) all.add(p.t);
    return [...all].sort((a, b) => a - b);
  }

  function valueAt(sr, t) {
    const p = sr.points.find((q) => q.t === t);
    return p ? p.v : undefined;
  }

  function renderLegend(ts) {
    const t = hover !== null ? ts[hover] : ts[ts.length - 1];
    fill(
      legend,
      series.map((sr, i) => {
        const v = t === undefined ? undefined : valueAt(sr, t);
        return h('span', { class: 'legend-item' }, h('span', { class: `swatch swatch-${i}` }), h('span', { class: 'legend-label' }, sr.label), h('strong', { class: 'legend-value' }, v === undefined ? '–' : format(v)));
      }),
      hover !== null && t !== undefined ? h('span', { class: 'legend-time' }, new Date(t).toLocaleTimeString()) : null,
    );
  }

  function render() {
    width = svgBox.clientWidth || 560;
    const ts = times();
    const padL = 44;
    const padR = 8;
    const padT = 8;
    const padB = 20;
    const w = Math.max(120, width);
    const plotW = w - padL - padR;
    const plotH = height - padT - padB;
    const svg = s('svg', { width: w, height, viewBox: `0 0 ${w} ${height}`, role: 'img', 'aria-label': title });
    if (ts.length < 2) {
      svg.append(s('text', { x: w / 2, y: height / 2, class: 'chart-empty', 'text-anchor': 'middle' }, ts.length ? 'Collecting samples…' : 'No data yet'));
      fill(svgBox, svg);
      renderLegend(ts);
      return;
    }
    const t0 = ts[0];
    const t1 = ts[ts.length - 1];
    let max = 0;
    for (const sr of series) for (const p of sr.points) max = Math.max(max, p.v);
    max = niceMax(max);
    const x = (t) => padL + ((t - t0) / (t1 - t0)) * plotW;
    const y = (v) => padT + plotH - (v / max) * plotH;
    for (const frac of [0, 0.5, 1]) {
      const gy = y(max * frac);
      svg.append(s('line', { x1: padL, x2: w - padR, y1: gy, y2: gy, class: 'chart-grid' }));
      svg.append(s('text', { x: padL - 6, y: gy + 4, 'text-anchor': 'end', class: 'chart-axis' }, format(max * frac)));
    }
    svg.append(s('text', { x: padL, y: height - 4, class: 'chart-axis' }, `−${Math.round((t1 - t0) / 1000)}s`));
    svg.append(s('text', { x: w - padR, y: height - 4, 'text-anchor': 'end', class: 'chart-axis' }, 'now'));
    series.forEach((sr, i) => {
      const pts = sr.points.filter((p) => p.t >= t0);
      if (!pts.length) return;
      const line = pts.map((p, j) => `${j ? 'L' : 'M'}${x(p.t).toFixed(1)},${y(p.v).toFixed(1)}`).join('');
      const area = `${line}L${x(pts[pts.length - 1].t).toFixed(1)},${y(0)}L${x(pts[0].t).toFixed(1)},${y(0)}Z`;
      svg.append(s('path', { d: area, class: `chart-area series-${i}` }));
      svg.append(s('path', { d: line, class: `chart-line series-${i}` }));
    });
    if (hover !== null && ts[hover] !== undefined) {
      const hx = x(ts[hover]);
      svg.append(s('line', { x1: hx, x2: hx, y1: padT, y2: padT + plotH, class: 'chart-cursor' }));
      series.forEach((sr, i) => {
        const v = valueAt(sr, ts[hover]);
        if (v !== undefined) svg.append(s('circle', { cx: hx, cy: y(v), r: 3.5, class: `chart-dot series-${i}` }));
      });
    }
    const overlay = s('rect', { x: padL, y: padT, width: plotW, height: plotH, class: 'chart-overlay' });
    overlay.addEventListener('mousemove', (ev) => {
      const rect = overlay.getBoundingClientRect();
      const t = t0 + ((ev.clientX - rect.left) / rect.width) * (t1 - t0);
      let best = 0;
      for (let k = 1; k < ts.length; k++) if (Math.abs(ts[k] - t) < Math.abs(ts[best] - t)) best = k;
      if (best !== hover) {
        hover = best;
        render();
      }
    });
    overlay.addEventListener('mouseleave', () => {
      hover = null;
      render();
    });
    svg.append(overlay);
    fill(svgBox, svg);
    renderLegend(ts);
  }

  const ro = new ResizeObserver(() => {
    if (svgBox.clientWidth && svgBox.clientWidth !== width) render();
  });
  ro.observe(svgBox);

  return {
    el,
    update(next) {
      series = next;
      render();
    },
  };
}

/** Rounds an axis maximum up to 1, 2 or 5 times a power of ten (at least 1). */
function niceMax(v) {
  if (v <= 1) return 1;
  const p = 10 ** Math.floor(Math.log10(v));
  for (const m of [1, 2, 5, 10]) if (v <= m * p) return m * p;
  return 10 * p;
}

/** A tiny inline trend line for table cells and tiles. */
export function sparkline(values, { width = 80, height = 22 } = {}) {
  const svg = s('svg', { width, height, viewBox: `0 0 ${width} ${height}`, class: 'sparkline', 'aria-hidden': 'true' });
  if (values.length < 2) return svg;
  const max = Math.max(1, ...values);
  const step = width / (values.length - 1);
  const d = values.map((v, i) => `${i ? 'L' : 'M'}${(i * step).toFixed(1)},${(height - 2 - (v / max) * (height - 4)).toFixed(1)}`).join('');
  svg.append(s('path', { d, class: 'sparkline-line' }));
  return svg;
}
