// @ts-check
// Publishing the reviewed manifest (POST /v0/agents): the YAML is read here (the yaml package's browser build, loaded
// on the first Publish), sent as JSON, and the answer said: listed, or every problem under the editor and at the
// form's fields.

import { ApiError, request } from '../../api.js';
import { fill, h, notice, setFieldError } from '../../dom.js';
import { describeProblem, placeProblems, sentence } from '../../agent-view.js';
import { tryHash } from '../../paths.js';
import { fieldMatcher, githubNotice } from './shared.js';

/**
 * @typedef {import('./connect.js').ConnectForm} ConnectForm
 * @typedef {import('../../api-types.js').Answer<'publishVersion', 201>} Published
 * @typedef {import('../../api-types.js').ErrorBody} ErrorBody
 */

/**
 * The editor's text as a manifest document, or undefined when it is not one (said at the editor).
 * @param {ConnectForm} c
 * @returns {Promise<object | undefined>}
 */
async function readManifest({ manifest, publishStatus }) {
  const text = manifest.input.value;
  if (!text.trim()) {
    setFieldError(manifest, 'There is nothing to publish yet: draft a listing above, or paste a manifest here.');
    manifest.input.focus();
    return undefined;
  }
  /** @type {typeof import('/console/vendor/yaml/index.js').parse} */
  let parseYaml;
  try {
    // The yaml package's browser build is some 70 modules: loaded on the first Publish, not with the page.
    ({ parse: parseYaml } = await import('/console/vendor/yaml/index.js'));
  } catch {
    fill(publishStatus, notice('error', 'The YAML reader could not be loaded. Check your connection, then publish again.'));
    return undefined;
  }
  /** @type {unknown} */
  let doc;
  try {
    doc = parseYaml(text);
  } catch (e) {
    const problem = /** @type {{ linePos?: Array<{ line: number, col: number }>, message?: string } | undefined} */ (e);
    const at = problem?.linePos?.[0] ? ` (line ${problem.linePos[0].line}, column ${problem.linePos[0].col})` : '';
    const why = String(problem?.message ?? e)
      .split('\n')[0]
      ?.replace(/ at line \d+, column \d+:?$/, '')
      .replace(/:$/, '');
    setFieldError(manifest, `This is not valid YAML${at}: ${why}.`);
    manifest.input.focus();
    return undefined;
  }
  if (!doc || typeof doc !== 'object' || Array.isArray(doc)) {
    setFieldError(manifest, 'A manifest is a mapping of fields (id, version, summary, …), not a single value or a list.');
    manifest.input.focus();
    return undefined;
  }
  return doc;
}

/**
 * Listed: what, whether it is evaluated, and a link to try it.
 * @param {ConnectForm} c
 * @param {Published} b
 */
async function listed(c, b) {
  const evaluation =
    b.evaluation?.status === 'pending'
      ? `Its evaluation is queued on ${b.evaluation.suites.join(', ')}: the results appear under “My agents” as they come.`
      : 'No evaluation suite applies to its capabilities, so it is not evaluated.';
  fill(
    c.publishStatus,
    notice(
      'ok',
      h(
        'p',
        {},
        h('strong', {}, `Listed: ${b.agent}@${b.version}. `),
        b.source === 'proprietary' ? 'Labelled proprietary: no code was checked. ' : '',
        evaluation,
      ),
      h('p', {}, h('a', { href: tryHash(b.agent) }, `Try ${b.agent}`), ' — a call under your own mandate is charged like anyone’s, and earns you your share.'),
    ),
  );
  const said = /** @type {HTMLElement | null} */ (c.publishStatus.querySelector('.notice'));
  said?.setAttribute('tabindex', '-1');
  said?.focus();
  await c.published();
}

/**
 * Refused: every problem under the editor (the manifest is what is sent), those about a form field there too.
 * @param {ConnectForm} c
 * @param {number} status
 * @param {Partial<ErrorBody['error']>} err
 */
function refused(c, status, err) {
  const { fields, manifest, publishProblems, publishStatus } = c;
  const problems = err.problems ?? [];
  if (err.code === 'github_not_linked') {
    fill(publishStatus, githubNotice(c.me));
    return;
  }
  if (problems.length) {
    const listing = fieldMatcher([
      ['$.id', fields.name],
      ['$.runtime.endpoint', fields.endpoint],
      ['$.pricing', fields.price],
      ['$.summary', fields.summary],
      ['$.interface.examples', fields.input],
    ]);
    placeProblems(problems, () => null, setFieldError, publishProblems);
    for (const pr of problems) {
      const f = listing(pr.path);
      if (f) setFieldError(f, `In the manifest below: ${describeProblem(pr)}`);
    }
    const n = problems.length;
    setFieldError(
      manifest,
      `The listing was refused: ${n} problem${n === 1 ? '' : 's'}, listed under the manifest. Fix ${n === 1 ? 'it' : 'them'} here, then publish again.`,
    );
    manifest.input.focus();
    fill(publishStatus, notice('error', sentence(err.message ?? 'the listing was refused')));
    return;
  }
  const advice = status === 429 ? ' Wait a while, then publish again.' : status === 503 || status === 502 ? ' Nothing was listed: try again later.' : '';
  fill(publishStatus, notice('error', sentence(err.message ?? `the gateway answered ${status}`), advice));
}

/**
 * Publish the editor's manifest.
 * @param {ConnectForm} c
 */
export async function publish(c) {
  c.clear();
  const doc = await readManifest(c);
  if (!doc) return;
  fill(c.publishStatus, h('p', { class: 'loading', role: 'status' }, 'Publishing…'));
  /** @type {import('../../api.js').Answer<Published | ErrorBody | null>} */
  let answer;
  try {
    answer = await request('POST', '/v0/agents', doc, { any: true });
  } catch (e) {
    if (!(e instanceof ApiError)) throw e;
    fill(c.publishStatus, notice('error', sentence(e.message)));
    return;
  }
  fill(c.publishStatus);
  const body = answer.body;
  if (answer.status === 201 && body && 'agent' in body) return listed(c, body);
  refused(c, answer.status, (body && 'error' in body ? body.error : undefined) ?? {});
}
