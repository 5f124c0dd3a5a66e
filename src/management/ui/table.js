// The list table every page uses: sortable columns (remembered per table), an instant filter
// (substring, or a regular expression), keyboard movement between rows, and rows that link to
// their detail page.

import { h, fill } from './dom.js';

const MAX_ROWS = 500;

/**
 * The filter box of a list page, wired to its table: it starts from the page's ?filter= (and
 * ?regex= when regex is offered) and keeps it there, Enter opens the first row that links
 * somewhere, ArrowDown moves into the table. setQuery is the router's (app.js).
 */
export function tableFilter(table, { placeholder, query, setQuery, regex = false }) {
  const filter = filterBox({
    placeholder,
    initial: query.get('filter') ?? '',
    regex: regex && query.get('regex') === '1',
    onChange: (m, st) => {
      table.setMatcher(m);
      setQuery(regex ? { filter: st.text, regex: st.regex ? '1' : '' } : { filter: st.text });
    },
    onEnter: () => {
      const href = table.firstHref();
      if (href) location.hash = href;
    },
    onDown: () => table.focusFirst(),
  });
  table.setMatcher(filter.matcher() ?? (() => false));
  return filter;
}

/**
 * A filter box. Plain text matches as a case-insensitive substring; with the regex toggle on, or
 * written as /pattern/flags, it is a regular expression. onChange(matcher) gets a function
 * (string → boolean), or null when the expression does not compile.
 */
export function filterBox({ placeholder = 'Filter by name', initial = '', regex = false, onChange, onEnter, onDown }) {
  const input = h('input', { type: 'search', class: 'filter-input', placeholder, value: initial, 'aria-label': placeholder, autocomplete: 'off', spellcheck: 'false', 'data-filter': '' });
  const toggle = h('button', { type: 'button', class: 'filter-regex', title: 'Regular expression', 'aria-pressed': String(regex), 'aria-label': 'Regular expression' }, '.*');
  const hint = h('span', { class: 'filter-hint', role: 'status' });
  const state = { text: initial, regex };

  function matcher() {
    const text = state.text.trim();
    if (!text) return () => true;
    const slashed = /^\/(.+)\/([a-z]*)$/.exec(text);
    if (state.regex || slashed) {
      try {
        const re = slashed ? new RegExp(slashed[1], slashed[2]) : new RegExp(text, 'i');
        return (name) => re.test(name);
      } catch (e) {
        return null;
      }
    }
    const lower = text.toLowerCase();
    return (name) => name.toLowerCase().includes(lower);
  }

  function changed() {
    const m = matcher();
    input.classList.toggle('invalid', m === null);
    hint.textContent = m === null ? 'invalid regular expression' : '';
    onChange(m ?? (() => false), state);
  }

  input.addEventListener('input', () => {
    state.text = input.value;
    changed();
  });
  input.addEventListener('keydown', (ev) => {
    if (ev.key === 'Enter') {
      ev.preventDefault();
      onEnter?.();
    } else if (ev.key === 'ArrowDown') {
      ev.preventDefault();
      onDown?.();
    } else if (ev.key === 'Escape' && input.value) {
      ev.preventDefault();
      input.value = '';
      state.text = '';
      changed();
    }
  });
  toggle.addEventListener('click', () => {
    state.regex = !state.regex;
    toggle.setAttribute('aria-pressed', String(state.regex));
    changed();
    input.focus();
  });
  const el = h('div', { class: 'filter' }, h('span', { class: 'filter-icon', 'aria-hidden': 'true' }, '⌕'), input, toggle, hint);
  return { el, input, matcher, state };
}

/**
 * dataTable({ id, columns, rowKey, rowHref, filterOn, emptyText, defaultSort })
 * columns: [{ key, label, get(row) → sort value, render(row) → node|string, num, cls, title }]
 * Returns { el, update(rows), setMatcher(fn), firstHref(), focusFirst(), shown }.
 */
export function dataTable({ id, columns, rowKey, rowHref, filterOn = (r) => r.name ?? '', emptyText = 'Nothing here yet.', defaultSort }) {
  const sortKey = `warren.sort.${id}`;
  let sort = JSON.parse(sessionStorage.getItem(sortKey) ?? 'null') ?? defaultSort ?? { key: columns[0].key, dir: 1 };
  let rows = [];
  let matcher = () => true;
  let visible = [];
  const thead = h('thead');
  const tbody = h('tbody');
  const foot = h('div', { class: 'table-foot' });
  const table = h('table', { class: 'data', dataset: { table: id } }, thead, tbody);
  const el = h('div', { class: 'table-wrap' }, table, foot);

  function header() {
    fill(
      thead,
      h(
        'tr',
        {},
        columns.map((c) => {
          const active = sort.key === c.key;
          const aria = active ? (sort.dir > 0 ? 'ascending' : 'descending') : 'none';
          if (c.sortable === false) return h('th', { class: [c.num ? 'num' : '', c.cls ?? ''].join(' '), scope: 'col' }, c.label);
          return h(
            'th',
            { class: [c.num ? 'num' : '', c.cls ?? ''].join(' '), scope: 'col', 'aria-sort': aria },
            h(
              'button',
              {
                type: 'button',
                class: 'sort',
                title: c.title ?? `Sort by ${c.label}`,
                onclick: () => {
                  sort = active ? { key: c.key, dir: -sort.dir } : { key: c.key, dir: c.num ? -1 : 1 };
                  sessionStorage.setItem(sortKey, JSON.stringify(sort));
                  header();
                  body();
                },
              },
              c.label,
              h('span', { class: 'sort-arrow', 'aria-hidden': 'true' }, active ? (sort.dir > 0 ? '▲' : '▼') : ''),
            ),
          );
        }),
      ),
    );
  }

  function sortValue(c, row) {
    const v = c.get ? c.get(row) : row[c.key];
    return v === undefined || v === null ? (c.num ? -Infinity : '') : v;
  }

  function body() {
    const col = columns.find((c) => c.key === sort.key) ?? columns[0];
    visible = rows.filter((r) => matcher(filterOn(r)));
    visible.sort((a, b) => {
      const x = sortValue(col, a);
      const y = sortValue(col, b);
      const cmp = typeof x === 'number' && typeof y === 'number' ? x - y : String(x).localeCompare(String(y), undefined, { numeric: true });
      return cmp * sort.dir;
    });
    const focusedKey = document.activeElement?.closest?.('tr')?.dataset?.key;
    const focusedInTable = tbody.contains(document.activeElement);
    fill(
      tbody,
      visible.slice(0, MAX_ROWS).map((r) => {
        const href = rowHref?.(r);
        return h(
          'tr',
          {
            dataset: { key: rowKey(r) },
            class: href ? 'link-row' : '',
            onclick: href
              ? (ev) => {
                  if (ev.target.closest('a, button, input, select, label')) return;
                  if (window.getSelection()?.toString()) return;
                  location.hash = href;
                }
              : undefined,
          },
          columns.map((c, i) => {
            const content = c.render ? c.render(r) : (r[c.key] ?? '');
            const inner = i === 0 && href ? h('a', { href, class: 'row-link' }, content) : content;
            return h('td', { class: [c.num ? 'num' : '', c.cls ?? ''].join(' ') }, inner);
          }),
        );
      }),
    );
    if (!visible.length) {
      tbody.append(h('tr', { class: 'empty' }, h('td', { colspan: columns.length }, rows.length ? 'No match for this filter.' : emptyText)));
    }
    if (focusedInTable && focusedKey) {
      const again = [...tbody.rows].find((tr) => tr.dataset.key === focusedKey)?.querySelector('a, button');
      again?.focus();
    }
    fill(foot, visible.length > MAX_ROWS ? `Showing the first ${MAX_ROWS} of ${visible.length} — narrow the filter to see the rest.` : '');
    api.shown = visible.length;
    el.dispatchEvent(new CustomEvent('shown', { detail: { shown: visible.length, total: rows.length } }));
  }

  tbody.addEventListener('keydown', (ev) => {
    if (ev.key !== 'ArrowDown' && ev.key !== 'ArrowUp') return;
    const tr = ev.target.closest('tr');
    const next = ev.key === 'ArrowDown' ? tr?.nextElementSibling : tr?.previousElementSibling;
    const target = next?.querySelector('a.row-link, a, button');
    if (target) {
      ev.preventDefault();
      target.focus();
    } else if (ev.key === 'ArrowUp') {
      ev.preventDefault();
      el.closest('.page')?.querySelector('[data-filter]')?.focus();
    }
  });

  const api = {
    el,
    shown: 0,
    update(next) {
      rows = next;
      body();
    },
    setMatcher(fn) {
      matcher = fn;
      body();
    },
    /** Shows why the rows could not be loaded (the API's reason) in place of the rows. */
    error(message) {
      rows = [];
      visible = [];
      fill(tbody, h('tr', { class: 'empty error-row' }, h('td', { colspan: columns.length }, `Could not load: ${message}`)));
    },
    firstHref() {
      return visible.length && rowHref ? rowHref(visible[0]) : null;
    },
    focusFirst() {
      tbody.querySelector('a.row-link, a, button')?.focus();
    },
  };
  header();
  body();
  return api;
}
