// Shared pieces of the pages: cards, badges, forms, key/value editors, confirm dialogs.

import { h, fill, showError } from './dom.js';
import { value as fmtValue } from './format.js';

/**
 * A form with a primary submit button: on submit, action runs with the button busy; an error it
 * throws is shown in the page, prefixed with context ("Adding the queue: ...").
 */
export function actionForm(label, context, action, ...children) {
  const submit = button(label, null, { kind: 'primary', type: 'submit' });
  return h(
    'form',
    {
      class: 'form',
      onsubmit: async (ev) => {
        ev.preventDefault();
        await busy(submit, async () => {
          try {
            await action();
          } catch (e) {
            showError(e, context);
          }
        });
      },
    },
    ...children,
    h('div', { class: 'form-actions' }, submit),
  );
}

/** A titled panel. */
export function card(title, ...children) {
  return h('section', { class: 'card' }, title ? h('h2', { class: 'card-title' }, title) : null, ...children);
}

export function badge(text, kind = '', title) {
  return h('span', { class: `badge ${kind ? `badge-${kind}` : ''}`, title }, text);
}

/** A labelled form field. */
export function field(label, control, hint) {
  return h('label', { class: 'field' }, h('span', { class: 'field-label' }, label), control, hint ? h('span', { class: 'field-hint' }, hint) : null);
}

export function button(label, onclick, { kind = '', type = 'button', title, disabled } = {}) {
  return h('button', { type, class: `btn ${kind ? `btn-${kind}` : ''}`, onclick, title, disabled }, label);
}

/**
 * A primary button that shows and hides a box below the page header (an "Add …" form), focusing
 * the box's first input when it opens. Returns { button, box }.
 */
export function collapsible(label) {
  const box = h('div', { class: 'collapsible', hidden: true });
  const btn = button(label, () => {
    box.hidden = !box.hidden;
    btn.setAttribute('aria-expanded', String(!box.hidden));
    if (!box.hidden) box.querySelector('input')?.focus();
  }, { kind: 'primary' });
  btn.setAttribute('aria-expanded', 'false');
  return { button: btn, box };
}

/** Runs an async action with its button disabled meanwhile. */
export async function busy(btn, fn) {
  btn.disabled = true;
  btn.classList.add('busy');
  try {
    return await fn();
  } finally {
    btn.disabled = false;
    btn.classList.remove('busy');
  }
}

/** A <dl> of label → value pairs (values may be nodes). */
export function props(pairs) {
  return h(
    'dl',
    { class: 'props' },
    pairs.filter(Boolean).map(([k, v]) => [h('dt', {}, k), h('dd', {}, v === undefined || v === null || v === '' ? '–' : v)]),
  );
}

/** An arguments/headers object as a small table, or a dash when empty. */
export function argsTable(obj) {
  const entries = obj && typeof obj === 'object' && !Array.isArray(obj) ? Object.entries(obj) : [];
  if (!entries.length) return h('span', { class: 'muted' }, 'none');
  return h(
    'table',
    { class: 'kv' },
    h(
      'tbody',
      {},
      entries.map(([k, v]) => h('tr', {}, h('th', { scope: 'row' }, k), h('td', {}, h('code', {}, fmtValue(v))))),
    ),
  );
}

/** Parses what someone typed as a value: numbers, booleans, null and JSON stay typed; the rest is a string. */
export function parseTyped(text) {
  const t = text.trim();
  if (/^-?\d+(\.\d+)?([eE][-+]?\d+)?$/.test(t)) return Number(t);
  if (t === 'true') return true;
  if (t === 'false') return false;
  if (t === 'null') return null;
  if (/^[[{"]/.test(t)) return JSON.parse(t);
  return text;
}

/**
 * Rows of key = value inputs; a new empty row appears as the last one is used. value() returns
 * the object, throwing when a value looks like JSON but does not parse.
 */
export function kvEditor({ initial = {}, keyLabel = 'Key', valueLabel = 'Value', suggestions = [], name = 'kv' } = {}) {
  const listId = `kv-${name}-${Math.random().toString(36).slice(2, 8)}`;
  const datalist = h('datalist', { id: listId }, suggestions.map((s) => h('option', { value: s })));
  const rows = h('div', { class: 'kv-rows' });
  const el = h('div', { class: 'kv-editor', dataset: { kv: name } }, rows, datalist, h('span', { class: 'field-hint' }, 'Numbers, true/false and JSON keep their type; wrap in "quotes" to force a string.'));

  function addRow(k = '', v = '') {
    const key = h('input', { type: 'text', class: 'kv-key', placeholder: keyLabel, 'aria-label': keyLabel, value: k, list: suggestions.length ? listId : undefined, spellcheck: 'false' });
    const val = h('input', { type: 'text', class: 'kv-value', placeholder: valueLabel, 'aria-label': valueLabel, value: v, spellcheck: 'false' });
    const remove = h('button', { type: 'button', class: 'btn btn-icon', 'aria-label': 'Remove row', title: 'Remove row', onclick: () => {
      row.remove();
      ensureBlank();
    } }, '×');
    const row = h('div', { class: 'kv-row' }, key, h('span', { class: 'kv-eq' }, '='), val, remove);
    const grow = () => {
      if (row === rows.lastElementChild && (key.value || val.value)) addRow();
    };
    key.addEventListener('input', grow);
    val.addEventListener('input', grow);
    rows.append(row);
  }

  function ensureBlank() {
    const last = rows.lastElementChild;
    if (!last || last.querySelector('.kv-key').value || last.querySelector('.kv-value').value) addRow();
  }

  function set(obj) {
    fill(rows);
    for (const [k, v] of Object.entries(obj ?? {})) addRow(k, typeof v === 'string' ? v : JSON.stringify(v));
    ensureBlank();
  }
  set(initial);

  return {
    el,
    set,
    value() {
      const out = {};
      for (const row of rows.children) {
        const k = row.querySelector('.kv-key').value.trim();
        const raw = row.querySelector('.kv-value').value;
        if (!k) continue;
        try {
          out[k] = parseTyped(raw);
        } catch {
          throw new Error(`The value of "${k}" is not valid JSON`);
        }
      }
      return out;
    },
  };
}

/**
 * A modal confirm dialog. Resolves true when confirmed. `body` may add inputs; `confirmText`
 * requires typing that text first (for destroying things that hold data).
 */
export function confirmDialog({ title, message, confirmLabel = 'Confirm', danger = false, body = null, confirmText = null }) {
  return new Promise((resolve) => {
    const typed = confirmText ? h('input', { type: 'text', class: 'confirm-typed', 'aria-label': `Type ${confirmText} to confirm`, autocomplete: 'off', spellcheck: 'false' }) : null;
    const ok = h('button', { type: 'submit', class: `btn ${danger ? 'btn-danger' : 'btn-primary'}`, value: 'ok', disabled: !!confirmText }, confirmLabel);
    const cancel = h('button', { type: 'button', class: 'btn', value: 'cancel', onclick: () => dialog.close('cancel') }, 'Cancel');
    typed?.addEventListener('input', () => {
      ok.disabled = typed.value !== confirmText;
    });
    const dialog = h(
      'dialog',
      { class: 'dialog', 'aria-labelledby': 'dialog-title' },
      h(
        'form',
        { method: 'dialog' },
        h('h2', { id: 'dialog-title' }, title),
        message ? h('p', {}, message) : null,
        body,
        typed ? field(h('span', {}, 'Type ', h('code', {}, confirmText), ' to confirm'), typed) : null,
        h('div', { class: 'dialog-actions' }, cancel, ok),
      ),
    );
    dialog.addEventListener('close', () => {
      dialog.remove();
      resolve(dialog.returnValue === 'ok');
    });
    document.body.append(dialog);
    dialog.showModal();
    (typed ?? body?.querySelector?.('input, textarea, select') ?? ok).focus();
  });
}

/** Tabs as links (so each has its own address); `current` is the active href. */
export function tabs(items, current) {
  return h(
    'nav',
    { class: 'tabs', 'aria-label': 'Sections' },
    items.map(([href, label]) => h('a', { href, class: `tab ${href === current ? 'active' : ''}`, 'aria-current': href === current ? 'page' : undefined }, label)),
  );
}

/** A page heading with an optional subtitle and actions on the right. */
export function pageHeader(title, { sub, actions = [], crumbs } = {}) {
  return h(
    'header',
    { class: 'page-header' },
    h(
      'div',
      { class: 'page-heading' },
      crumbs ? h('div', { class: 'crumbs' }, crumbs) : null,
      h('h1', {}, title),
      sub ? h('div', { class: 'page-sub' }, sub) : null,
    ),
    actions.length ? h('div', { class: 'page-actions' }, actions) : null,
  );
}
