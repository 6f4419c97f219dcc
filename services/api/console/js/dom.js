// Building the page safely: every text goes in as a text node, never as HTML. No module of the console
// parses a string as HTML (no inner or outer HTML, no adjacent-HTML insertion); author-, agent- and caller-written
// strings can only ever be text.

/**
 * h('p', { class: 'x', id: 'y', on: { click } , ...attributes }, ...children): an element. Children are nodes,
 * strings or numbers (text), arrays (flattened), or null/undefined/false (skipped).
 */
export function h(tag, props = {}, ...children) {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries(props ?? {})) {
    if (value === undefined || value === null || value === false) continue;
    if (name === 'on') for (const [event, fn] of Object.entries(value)) el.addEventListener(event, fn);
    else if (name === 'class') el.className = value;
    else if (name === 'hidden' || name === 'disabled' || name === 'checked' || name === 'required' || name === 'open' || name === 'selected')
      el[name] = Boolean(value);
    else if (name === 'value') el.value = value;
    else el.setAttribute(name, value === true ? '' : String(value));
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return el;
}

/** Replace an element's content. */
export function fill(el, ...children) {
  el.replaceChildren();
  return append(el, children);
}

/** An SVG element (the chart), attributes only. */
export function svg(tag, attrs = {}, ...children) {
  const el = document.createElementNS('http://www.w3.org/2000/svg', tag);
  for (const [name, value] of Object.entries(attrs)) if (value !== undefined && value !== null) el.setAttribute(name, String(value));
  append(el, children);
  return el;
}

let ids = 0;
/** A fresh id for label/field pairs. */
export const uid = (prefix = 'f') => `${prefix}-${++ids}`;

/** A labelled field: { label, name, type, value, hint, options (for select), rows (textarea) }. Returns { row, input, error }. */
export function field({ label, name, type = 'text', value = '', hint, options, rows, required, placeholder, autocomplete = 'off', spellcheck }) {
  const id = uid(name);
  const hintId = hint ? `${id}-hint` : undefined;
  const errorId = `${id}-error`;
  let input;
  const common = { id, name, 'aria-describedby': [hintId, errorId].filter(Boolean).join(' '), required, autocomplete };
  if (options) {
    input = h(
      'select',
      common,
      options.map((o) =>
        typeof o === 'string' ? h('option', { value: o, selected: o === value }, o) : h('option', { value: o.value, selected: o.value === value }, o.label),
      ),
    );
  } else if (type === 'textarea') {
    input = h('textarea', { ...common, rows: rows ?? 6, placeholder, spellcheck: spellcheck === undefined ? 'false' : String(spellcheck) });
    input.value = value;
  } else if (type === 'checkbox') {
    input = h('input', { ...common, type: 'checkbox', checked: Boolean(value) });
  } else {
    input = h('input', { ...common, type, value, placeholder, spellcheck: spellcheck === undefined ? undefined : String(spellcheck) });
  }
  const error = h('p', { class: 'field-error', id: errorId, hidden: true });
  const row =
    type === 'checkbox'
      ? h('div', { class: 'field check' }, input, h('label', { for: id }, label), hint ? h('p', { class: 'hint', id: hintId }, hint) : null, error)
      : h('div', { class: 'field' }, h('label', { for: id }, label), hint ? h('p', { class: 'hint', id: hintId }, hint) : null, input, error);
  return { row, input, error };
}

/** Show a problem at its field (or clear it). */
export function setFieldError(f, message) {
  f.error.textContent = message ?? '';
  f.error.hidden = !message;
  if (message) f.input.setAttribute('aria-invalid', 'true');
  else f.input.removeAttribute('aria-invalid');
}

/** A notice: kind is 'error', 'ok' or 'info'. Errors are announced (role=alert), the rest politely. */
export function notice(kind, ...children) {
  return h('div', { class: `notice ${kind}`, role: kind === 'error' ? 'alert' : 'status' }, ...children);
}

/** A button that runs an async action, disabled while it runs. */
export function actionButton(label, action, props = {}) {
  const button = h('button', { type: 'button', ...props }, label);
  button.addEventListener('click', async () => {
    if (button.disabled) return;
    button.disabled = true;
    button.setAttribute('aria-busy', 'true');
    try {
      await action(button);
    } finally {
      button.disabled = false;
      button.removeAttribute('aria-busy');
    }
  });
  return button;
}

/** A long text folded behind a <details> when it is longer than `max` characters or 12 lines. */
export function foldedText(text, { max = 600, summary = 'Show all' } = {}) {
  const pre = h('pre', { class: 'text' }, text);
  const lines = text.split('\n').length;
  if (text.length <= max && lines <= 12) return pre;
  const head = text.split('\n').slice(0, 12).join('\n').slice(0, max);
  return h(
    'div',
    { class: 'folded' },
    h('pre', { class: 'text' }, `${head}…`),
    h('details', {}, h('summary', {}, `${summary} (${text.length} characters, ${lines} lines)`), pre),
  );
}

/** A copy-to-clipboard button for a text (the key and the claude mcp add line). */
export function copyButton(text, label = 'Copy') {
  return actionButton(label, async (button) => {
    try {
      await navigator.clipboard.writeText(text);
      button.textContent = 'Copied';
    } catch {
      button.textContent = 'Select the text and copy it';
    }
  });
}
