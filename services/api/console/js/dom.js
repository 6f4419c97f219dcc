// @ts-check
// Building the page safely: every text goes in as a text node, never as HTML. No module of the console
// parses a string as HTML (no inner or outer HTML, no adjacent-HTML insertion); author-, agent- and caller-written
// strings can only ever be text.

/**
 * What may go into an element: nodes, strings or numbers (text), arrays (flattened), or null/undefined/false (skipped).
 * @typedef {import('./dom-types.js').Child} Child
 */

/**
 * An element's properties: `class`, `on` (event listeners), the boolean properties, `value`, and attributes.
 * @typedef {Record<string, unknown> & { on?: Record<string, (event: any) => unknown> }} Props
 */
// `any` above: a listener's event is the DOM's own type for its event name, which a map of names cannot say.

const BOOLEAN_PROPERTIES = new Set(['hidden', 'disabled', 'checked', 'required', 'open', 'selected']);

/**
 * h('p', { class: 'x', id: 'y', on: { click } , ...attributes }, ...children): an element.
 * @template {keyof HTMLElementTagNameMap} K
 * @param {K} tag
 * @param {Props | null} [props]
 * @param {...Child} children
 * @returns {HTMLElementTagNameMap[K]}
 */
export function h(tag, props = {}, ...children) {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries(props ?? {})) {
    if (value === undefined || value === null || value === false) continue;
    if (name === 'on') for (const [event, fn] of Object.entries(/** @type {Record<string, EventListener>} */ (value))) el.addEventListener(event, fn);
    else if (name === 'class') el.className = String(value);
    else if (BOOLEAN_PROPERTIES.has(name)) Reflect.set(el, name, Boolean(value));
    else if (name === 'value') Reflect.set(el, name, value);
    else el.setAttribute(name, value === true ? '' : String(value));
  }
  append(el, children);
  return el;
}

/**
 * @template {Element} E
 * @param {E} el
 * @param {Child[]} children
 * @returns {E}
 */
function append(el, children) {
  // Flattened to any depth; the cast says what is left once the arrays are gone.
  for (const child of /** @type {Array<Node | string | number | boolean | null | undefined>} */ (/** @type {unknown[]} */ (children).flat(Infinity))) {
    if (child === null || child === undefined || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return el;
}

/**
 * Replace an element's content.
 * @template {Element} E
 * @param {E} el
 * @param {...Child} children
 */
export function fill(el, ...children) {
  el.replaceChildren();
  return append(el, children);
}

/**
 * An SVG element (the chart), attributes only.
 * @param {string} tag
 * @param {Record<string, unknown>} [attrs]
 * @param {...Child} children
 */
export function svg(tag, attrs = {}, ...children) {
  const el = document.createElementNS('http://www.w3.org/2000/svg', tag);
  for (const [name, value] of Object.entries(attrs)) if (value !== undefined && value !== null) el.setAttribute(name, String(value));
  append(el, children);
  return el;
}

let ids = 0;
/** A fresh id for label/field pairs. */
export const uid = (prefix = 'f') => `${prefix}-${++ids}`;

/**
 * What `field` draws: a select (`options`), a textarea, a checkbox, or an input of `type`.
 * @typedef {object} FieldSpec
 * @property {string} label
 * @property {string} name
 * @property {string} [type]
 * @property {string} [value]
 * @property {string} [hint]
 * @property {Array<string | { value: string, label: string }>} [options]
 * @property {number} [rows]
 * @property {boolean} [required]
 * @property {string} [placeholder]
 * @property {string} [autocomplete]
 * @property {boolean} [spellcheck]
 */

/**
 * A labelled field, its input and the place of its error.
 * @typedef {{ row: HTMLElement, input: HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement, error: HTMLElement }} Field
 */

/**
 * The field's control.
 * @param {FieldSpec} spec
 * @param {Props} common
 */
function control({ type = 'text', value = '', options, rows, placeholder, spellcheck }, common) {
  if (options) {
    return h(
      'select',
      common,
      options.map((o) =>
        typeof o === 'string' ? h('option', { value: o, selected: o === value }, o) : h('option', { value: o.value, selected: o.value === value }, o.label),
      ),
    );
  }
  if (type === 'textarea') {
    const input = h('textarea', { ...common, rows: rows ?? 6, placeholder, spellcheck: spellcheck === undefined ? 'false' : String(spellcheck) });
    input.value = value;
    return input;
  }
  if (type === 'checkbox') return h('input', { ...common, type: 'checkbox', checked: Boolean(value) });
  return h('input', { ...common, type, value, placeholder, spellcheck: spellcheck === undefined ? undefined : String(spellcheck) });
}

/**
 * A labelled field: { label, name, type, value, hint, options (for select), rows (textarea) }. Returns { row, input, error }.
 * @param {FieldSpec} spec
 * @returns {Field}
 */
export function field(spec) {
  const { label, name, type = 'text', hint, required, autocomplete = 'off' } = spec;
  const id = uid(name);
  const hintId = hint ? `${id}-hint` : undefined;
  const errorId = `${id}-error`;
  const input = control(spec, { id, name, 'aria-describedby': [hintId, errorId].filter(Boolean).join(' '), required, autocomplete });
  const error = h('p', { class: 'field-error', id: errorId, hidden: true });
  const row =
    type === 'checkbox'
      ? h('div', { class: 'field check' }, input, h('label', { for: id }, label), hint ? h('p', { class: 'hint', id: hintId }, hint) : null, error)
      : h('div', { class: 'field' }, h('label', { for: id }, label), hint ? h('p', { class: 'hint', id: hintId }, hint) : null, input, error);
  return { row, input, error };
}

/**
 * Whether a checkbox field is ticked.
 * @param {Field} f
 */
export const checked = (f) => f.input instanceof HTMLInputElement && f.input.checked;

/**
 * Show a problem at its field (or clear it).
 * @param {Field} f
 * @param {string | null | undefined} message
 */
export function setFieldError(f, message) {
  f.error.textContent = message ?? '';
  f.error.hidden = !message;
  if (message) f.input.setAttribute('aria-invalid', 'true');
  else f.input.removeAttribute('aria-invalid');
}

/**
 * A notice: kind is 'error', 'ok' or 'info'. Errors are announced (role=alert), the rest politely.
 * @param {'error' | 'ok' | 'info'} kind
 * @param {...Child} children
 */
export function notice(kind, ...children) {
  return h('div', { class: `notice ${kind}`, role: kind === 'error' ? 'alert' : 'status' }, ...children);
}

/**
 * A button that runs an async action, disabled while it runs.
 * @param {string} label
 * @param {(button: HTMLButtonElement) => unknown} action
 * @param {Props} [props]
 */
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

/**
 * A long text folded behind a <details> when it is longer than `max` characters or 12 lines.
 * @param {string} text
 * @param {{ max?: number, summary?: string }} [options]
 */
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

/**
 * A copy-to-clipboard button for a text (the key and the claude mcp add line).
 * @param {string} text
 */
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
