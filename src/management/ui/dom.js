// Building DOM without innerHTML: every name and payload shown is text, never markup.

/**
 * h('a', { href: '#/', class: 'x', onclick: fn }, 'text', child) → an element.
 * Attributes: `class`, `style` (string), `dataset` (object), `on*` (listeners), booleans set or
 * omitted, everything else via setAttribute. Children: nodes, strings, numbers, arrays; null,
 * undefined and false are skipped.
 */
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs ?? {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith('on') && typeof v === 'function') el.addEventListener(k.slice(2), v);
    else if (k === 'dataset') Object.assign(el.dataset, v);
    else if (k === 'value' && 'value' in el) el.value = v;
    else if (k === 'checked' || k === 'selected') el[k] = !!v;
    else el.setAttribute(k, v === true ? '' : String(v));
  }
  append(el, children);
  return el;
}

/** An SVG element (same rules as h). */
export function s(tag, attrs = {}, ...children) {
  const el = document.createElementNS('http://www.w3.org/2000/svg', tag);
  for (const [k, v] of Object.entries(attrs ?? {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith('on') && typeof v === 'function') el.addEventListener(k.slice(2), v);
    else el.setAttribute(k, String(v));
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const c of children.flat(Infinity)) {
    if (c === null || c === undefined || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
}

/** Replaces an element's children. */
export function fill(el, ...children) {
  el.replaceChildren();
  append(el, children);
  return el;
}

/** A short-lived message in the corner; errors stay longer and can be dismissed. */
export function toast(message, kind = 'ok') {
  const box = document.getElementById('toasts');
  const close = () => item.remove();
  const item = h(
    'div',
    { class: `toast toast-${kind}`, role: kind === 'error' ? 'alert' : 'status' },
    h('span', { class: 'toast-text' }, message),
    h('button', { class: 'toast-close', type: 'button', 'aria-label': 'Dismiss', onclick: close }, '×'),
  );
  box.append(item);
  setTimeout(close, kind === 'error' ? 12000 : 4000);
}

/** Shows an API (or any) error: the API's `reason` when it gave one. */
export function showError(err, context) {
  const text = err?.message ?? String(err);
  toast(context ? `${context}: ${text}` : text, 'error');
}
