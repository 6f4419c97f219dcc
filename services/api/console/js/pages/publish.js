// @ts-check
// Publish (#/publish, human keys): connect a webhook (draft a listing from one real call, review the YAML,
// publish it), set the endpoint credential of an agent (write-only), and watch your versions: listed or yanked,
// their evaluations, what each earned. Every text an author, an endpoint or the gateway wrote is shown as text.

import { ApiError, get, request } from '../api.js';
import { actionButton, field, fill, h, notice, setFieldError, uid } from '../dom.js';
import { page, section, when } from '../format.js';
import { formatMicros, sum, toMicros } from '../money.js';
import { describeProblem, evaluationView, placeProblems, sentence } from '../agent-view.js';
import { gitHubButton } from '../sign-in.js';

const AMOUNT = /^[0-9]+(\.[0-9]{1,6})?$/;
const agentPath = (id) => id.split('/').map(encodeURIComponent).join('/');
const versionPath = (id, version) => `/v0/agents/${agentPath(id)}@${encodeURIComponent(version)}`;

/** GET /v0/me names the GitHub login an account is linked to (`account.github`), or null: publishing needs one. */
const githubLinked = (me) => Boolean(me?.account?.github);

function githubNotice(me) {
  return notice(
    'info',
    h('p', {}, h('strong', {}, 'Publishing needs signing in with GitHub. '), 'This account was made by email, so it is not linked to a GitHub account yet.'),
    h(
      'p',
      {},
      'Sign in with GitHub once: if GitHub shows the same verified email',
      me?.account?.email ? ` (${me.account.email})` : '',
      ', this account is linked, keeps its handle, its mandates and its credit, and can publish. Holon never keeps your GitHub token.',
    ),
    h('p', {}, gitHubButton('Sign in with GitHub')),
  );
}

/** Amounts per currency ({EUR: "0.009"}) in words: "0.009 EUR"; several currencies are never added together. */
function amounts(byCurrency) {
  const entries = Object.entries(byCurrency ?? {}).filter(([, v]) => toMicros(v) !== 0n);
  if (!entries.length) return 'nothing yet';
  return entries.map(([currency, v]) => `${formatMicros(toMicros(v))} ${currency}`).join(' and ');
}

/** Σ of several {currency: amount} maps, exactly (BigInt micro-units). */
function addAmounts(maps) {
  const byCurrency = new Map();
  for (const m of maps) for (const [c, v] of Object.entries(m ?? {})) byCurrency.set(c, [...(byCurrency.get(c) ?? []), v]);
  return Object.fromEntries([...byCurrency].map(([c, vs]) => [c, formatMicros(sum(vs))]));
}

/** Where a problem path of the draft request, or of the manifest, belongs among the form's fields. */
function fieldMatcher(pairs) {
  return (path) => {
    const p = String(path ?? '');
    for (const [prefix, f] of pairs) if (p === prefix || p.startsWith(`${prefix}.`) || p.startsWith(`${prefix}[`)) return f;
    return null;
  };
}

export async function render(p) {
  const me = await get('/v0/me');
  const handle = me.account?.handle ?? p.who.handle;
  const linked = githubLinked(me);
  const status = h('p', { role: 'status', tabindex: '-1', id: 'publish-status' });

  const mine = myAgents(p, status);
  const credential = credentialSection(handle);
  mine.onChangeToken = (id) => credential.choose(id);
  credential.knownAgents = mine.agentIds;

  const connect = linked ? connectSection(handle, me, () => mine.reload()) : null;
  await mine.reload();

  return page(
    'Publish',
    'List an agent that runs on your own server, set the token Holon sends to it, and see what each version earned.',
    linked ? null : githubNotice(me),
    status,
    connect,
    linked ? credential.node : null,
    mine.node,
  );
}

// ------------------------------------------------------------------------------------------------ (a) connect

function connectSection(handle, me, published) {
  const name = field({
    label: 'Agent name',
    name: 'name',
    hint: `2 to 39 characters of a–z, 0–9 and “-”. It is listed as ${handle}/<name>.`,
    required: true,
    spellcheck: false,
  });
  const endpoint = field({
    label: 'Endpoint',
    name: 'endpoint',
    type: 'url',
    placeholder: 'https://hooks.example.com/webhook/…',
    hint: 'The https address Holon POSTs each input to, as JSON; it answers with the output as JSON (an n8n Webhook node, a Make scenario, a small API). It is called once now, with the example input. If it needs a token, set it under “Endpoint credential” below first.',
    required: true,
  });
  const input = field({
    label: 'Example input (JSON)',
    name: 'input',
    type: 'textarea',
    rows: 5,
    placeholder: '{ "text": "Total: 12.50" }',
    hint: 'A real input your endpoint accepts. The draft describes its shape, and the answer’s, from this one call.',
    required: true,
  });
  const price = field({
    label: 'Price (EUR per run)',
    name: 'price',
    placeholder: '0.05',
    hint: 'What one successful run costs the caller, in euros, up to 6 decimals. Leave it empty for a free agent. Holon keeps a 10 % fee.',
  });
  price.input.setAttribute('inputmode', 'decimal');
  const summary = field({
    label: 'Summary',
    name: 'summary',
    hint: 'One line, at most 140 characters, shown in the catalogue. Optional: it can be edited in the draft.',
  });
  const draftProblems = h('ul', { hidden: true, 'aria-label': 'Problems of the draft' });
  const draftStatus = h('div', { 'aria-live': 'polite' });
  const formFields = [name, endpoint, input, price, summary];

  const manifest = field({
    label: 'Manifest (YAML)',
    name: 'manifest',
    type: 'textarea',
    rows: 8,
    hint: 'This is exactly what will be listed: review it, and edit anything (the version, the summary, the capabilities, the price, the schemas). Nothing is stored until you publish. You can also paste a holon.yaml you wrote.',
  });
  const publishProblems = h('ul', { hidden: true, id: uid('publish-problems'), 'aria-label': 'Why the listing was refused' });
  const publishStatus = h('div', { 'aria-live': 'polite' });
  const drafts = fieldMatcher([
    ['$.name', name],
    ['$.endpoint', endpoint],
    ['$.input', input],
    ['$.price', price],
    ['$.summary', summary],
  ]);
  const listing = fieldMatcher([
    ['$.id', name],
    ['$.runtime.endpoint', endpoint],
    ['$.pricing', price],
    ['$.summary', summary],
    ['$.interface.examples', input],
  ]);

  const clear = () => {
    for (const f of [...formFields, manifest]) setFieldError(f, '');
    draftProblems.hidden = true;
    publishProblems.hidden = true;
    fill(draftStatus);
    fill(publishStatus);
  };

  async function draft() {
    clear();
    const problems = [];
    const nameValue = name.input.value.trim().replace(new RegExp(`^${handle}/`), '');
    if (!nameValue) problems.push([name, 'Give the agent a name, such as “invoice-total”.']);
    const endpointValue = endpoint.input.value.trim();
    if (!endpointValue) problems.push([endpoint, 'Give the address of your webhook, starting with https://.']);
    let example;
    if (!input.input.value.trim()) problems.push([input, 'Give an example input, as JSON: the endpoint is called once with it.']);
    else {
      try {
        example = JSON.parse(input.input.value);
      } catch (e) {
        problems.push([input, `This is not valid JSON (${e.message}). Check the quotes, commas and brackets.`]);
      }
    }
    const priceValue = price.input.value.trim().replace(',', '.');
    if (priceValue && (!AMOUNT.test(priceValue) || toMicros(priceValue) === 0n)) {
      problems.push([price, 'Write the price as a number of euros above zero, such as 0.05 (at most 6 decimals), or leave it empty for a free agent.']);
    }
    if (problems.length) {
      for (const [f, message] of problems) setFieldError(f, message);
      problems[0][0].input.focus();
      return;
    }
    const body = { name: nameValue, endpoint: endpointValue, input: example };
    if (priceValue) body.price = priceValue;
    if (summary.input.value.trim()) body.summary = summary.input.value.trim();
    fill(draftStatus, h('p', { class: 'loading', role: 'status' }, 'Calling your endpoint once with the example input…'));
    let answer;
    try {
      answer = await request('POST', '/v0/agents/draft', body, { any: true });
    } catch (e) {
      if (!(e instanceof ApiError)) throw e;
      fill(draftStatus, notice('error', sentence(e.message)));
      return;
    }
    fill(draftStatus);
    if (answer.status === 200) {
      manifest.input.value = answer.body.yaml;
      manifest.input.rows = Math.min(30, Math.max(8, answer.body.yaml.split('\n').length + 1));
      fill(draftStatus, notice('ok', 'Your endpoint answered. The draft listing is below: review it, then publish it. Nothing is stored or listed yet.'));
      manifest.input.focus();
      return;
    }
    const err = answer.body?.error ?? {};
    const listed = err.problems ?? [];
    if (answer.status === 400 && listed.length) {
      const rest = placeProblems(listed, drafts, setFieldError, draftProblems);
      fill(draftStatus, notice('error', 'The draft was not made: fix what is said at the fields', rest ? ' and below' : '', ', then try again.'));
      (formFields.find((f) => !f.error.hidden) ?? name).input.focus();
      return;
    }
    if (answer.status === 422 && /^(endpoint_|credential_)/.test(err.code ?? '')) {
      const advice =
        err.code === 'endpoint_refused'
          ? ' Use a public https address.'
          : err.code === 'endpoint_unreachable'
            ? ' Check the address, and that the server is up.'
            : err.code === 'endpoint_failed'
              ? ' Check that it accepts this example input.'
              : err.code === 'endpoint_not_json'
                ? ' It must answer with a JSON body (in n8n: a “Respond to Webhook” node).'
                : err.code === 'credential_unusable'
                  ? ' Set the endpoint credential again below.'
                  : '';
      setFieldError(endpoint, `${sentence(err.message)}${advice}`);
      endpoint.input.focus();
      fill(draftStatus, notice('error', 'Your endpoint could not be drafted: see what is said at the endpoint.'));
      return;
    }
    if (listed.length) placeProblems(listed, () => null, setFieldError, draftProblems);
    const wait = answer.status === 429 ? ' Wait a while: every draft is a request to your server, so they are limited per hour.' : '';
    fill(draftStatus, notice('error', sentence(err.message ?? `the gateway answered ${answer.status}`), wait));
  }

  async function publish() {
    clear();
    const text = manifest.input.value;
    if (!text.trim()) {
      setFieldError(manifest, 'There is nothing to publish yet: draft a listing above, or paste a manifest here.');
      manifest.input.focus();
      return;
    }
    let parseYaml;
    try {
      // The yaml package's browser build is some 70 modules: loaded on the first Publish, not with the page.
      ({ parse: parseYaml } = await import('/console/vendor/yaml/index.js'));
    } catch {
      fill(publishStatus, notice('error', 'The YAML reader could not be loaded. Check your connection, then publish again.'));
      return;
    }
    let doc;
    try {
      doc = parseYaml(text);
    } catch (e) {
      const at = e?.linePos?.[0] ? ` (line ${e.linePos[0].line}, column ${e.linePos[0].col})` : '';
      const why = String(e?.message ?? e)
        .split('\n')[0]
        .replace(/ at line \d+, column \d+:?$/, '')
        .replace(/:$/, '');
      setFieldError(manifest, `This is not valid YAML${at}: ${why}.`);
      manifest.input.focus();
      return;
    }
    if (!doc || typeof doc !== 'object' || Array.isArray(doc)) {
      setFieldError(manifest, 'A manifest is a mapping of fields (id, version, summary, …), not a single value or a list.');
      manifest.input.focus();
      return;
    }
    fill(publishStatus, h('p', { class: 'loading', role: 'status' }, 'Publishing…'));
    let answer;
    try {
      answer = await request('POST', '/v0/agents', doc, { any: true });
    } catch (e) {
      if (!(e instanceof ApiError)) throw e;
      fill(publishStatus, notice('error', sentence(e.message)));
      return;
    }
    fill(publishStatus);
    if (answer.status === 201) {
      const b = answer.body;
      const evaluation =
        b.evaluation?.status === 'pending'
          ? `Its evaluation is queued on ${b.evaluation.suites.join(', ')}: the results appear under “My agents” as they come.`
          : 'No evaluation suite applies to its capabilities, so it is not evaluated.';
      fill(
        publishStatus,
        notice(
          'ok',
          h(
            'p',
            {},
            h('strong', {}, `Listed: ${b.agent}@${b.version}. `),
            b.source === 'proprietary' ? 'Labelled proprietary: no code was checked. ' : '',
            evaluation,
          ),
          h(
            'p',
            {},
            h('a', { href: `#/try/${agentPath(b.agent)}` }, `Try ${b.agent}`),
            ' — a call under your own mandate is charged like anyone’s, and earns you your share.',
          ),
        ),
      );
      publishStatus.querySelector('.notice')?.setAttribute('tabindex', '-1');
      publishStatus.querySelector('.notice')?.focus();
      await published();
      return;
    }
    const err = answer.body?.error ?? {};
    const listed = err.problems ?? [];
    if (err.code === 'github_not_linked') {
      fill(publishStatus, githubNotice(me));
      return;
    }
    if (listed.length) {
      // Every problem under the editor (the manifest is what is sent); those about a form field there too.
      placeProblems(listed, () => null, setFieldError, publishProblems);
      for (const pr of listed) {
        const f = listing(pr.path);
        if (f) setFieldError(f, `In the manifest below: ${describeProblem(pr)}`);
      }
      setFieldError(
        manifest,
        `The listing was refused: ${listed.length} problem${listed.length === 1 ? '' : 's'}, listed under the manifest. Fix ${listed.length === 1 ? 'it' : 'them'} here, then publish again.`,
      );
      manifest.input.focus();
      fill(publishStatus, notice('error', sentence(err.message ?? 'the listing was refused')));
      return;
    }
    const advice =
      answer.status === 429
        ? ' Wait a while, then publish again.'
        : answer.status === 503 || answer.status === 502
          ? ' Nothing was listed: try again later.'
          : '';
    fill(publishStatus, notice('error', sentence(err.message ?? `the gateway answered ${answer.status}`), advice));
  }

  const draftForm = h(
    'form',
    {
      class: 'card',
      'aria-labelledby': 'draft-heading',
      novalidate: true,
      on: {
        // The button is the form's submit button: Enter in a field clicks it, and its click runs the draft.
        submit: (event) => event.preventDefault(),
      },
    },
    h('h3', { id: 'draft-heading' }, '1. Describe your webhook'),
    formFields.map((f) => f.row),
  );
  const draftButton = actionButton('Call it and draft the listing', draft, { id: 'draft', type: 'submit' });
  draftForm.append(h('p', {}, draftButton), draftProblems, draftStatus);

  const publishButton = actionButton('Publish', publish, { id: 'publish' });
  const editor = h(
    'div',
    { class: 'card', role: 'group', 'aria-labelledby': 'review-heading' },
    h('h3', { id: 'review-heading' }, '2. Review and publish'),
    manifest.row,
    publishProblems,
    h('p', {}, publishButton, h('span', { class: 'hint' }, ' Listed at once when every condition holds; otherwise every problem is listed.')),
    publishStatus,
  );
  return section(
    'Connect a webhook',
    h('p', {}, 'Holon calls your endpoint once with an example input and drafts the listing from its answer. You review it, then publish.'),
    draftForm,
    editor,
  );
}

// ------------------------------------------------------------------------------------------------ (b) credential

function credentialSection(handle) {
  const state = h('p', { role: 'status', id: 'credential-state' });
  const listId = uid('agent-names');
  const datalist = h('datalist', { id: listId });
  const name = field({
    label: 'Agent name',
    name: 'credential-agent',
    hint: `One of your agents (${handle}/<name>), published or not yet.`,
    spellcheck: false,
  });
  name.input.setAttribute('list', listId);
  const token = field({
    label: 'Token',
    name: 'token',
    type: 'password',
    autocomplete: 'new-password',
    hint: 'Sent as “Authorization: Bearer <token>” on every request to this agent’s endpoint, for all its versions, evaluations included. Write-only: Holon never shows it again, not even to you.',
  });
  const out = {
    knownAgents: () => [],
    choose(id) {
      name.input.value = id.replace(new RegExp(`^${handle}/`), '');
      readState();
      token.input.focus();
    },
    node: null,
  };
  const agentId = () => {
    const v = name.input.value.trim().replace(new RegExp(`^${handle}/`), '');
    return v ? `${handle}/${v}` : '';
  };
  const credentialPath = (id) => `/v0/agents/${agentPath(id)}/credential`;
  const describe = (id, c) =>
    c.set ? `${id}: a token is set${c.set_at ? ` (since ${when(c.set_at)})` : ''}.` : `${id}: no token is set; Holon calls its endpoint without one.`;
  const refusal = (e) =>
    e.status === 503
      ? `${sentence(e.message)} Ask the operator of this gateway: credentials cannot be stored without it.`
      : e.status === 404
        ? 'That agent is not in your namespace.'
        : sentence(e.message);

  async function readState() {
    setFieldError(name, '');
    const id = agentId();
    state.textContent = '';
    if (!id) return;
    try {
      state.textContent = describe(id, await get(credentialPath(id)));
    } catch (e) {
      if (!(e instanceof ApiError)) throw e;
      setFieldError(name, refusal(e));
    }
  }
  name.input.addEventListener('change', readState);

  const needName = () => {
    if (agentId()) return false;
    setFieldError(name, 'Name the agent the token is for.');
    name.input.focus();
    return true;
  };

  const setButton = actionButton(
    'Set',
    async () => {
      setFieldError(name, '');
      setFieldError(token, '');
      if (needName()) return;
      const value = token.input.value;
      if (!value) {
        setFieldError(token, 'Type or paste the token your endpoint expects.');
        token.input.focus();
        return;
      }
      const id = agentId();
      try {
        const body = (await request('PUT', credentialPath(id), { token: value })).body;
        token.input.value = '';
        state.textContent = describe(id, body.credential);
      } catch (e) {
        if (!(e instanceof ApiError)) throw e;
        const atToken = (e.problems ?? []).filter((x) => String(x.path).startsWith('$.token'));
        if (atToken.length) setFieldError(token, atToken.map(describeProblem).join(' '));
        else if (e.status === 400) setFieldError(token, sentence(e.message));
        else setFieldError(name, refusal(e));
      }
    },
    { type: 'submit', id: 'credential-set' },
  );
  const clearButton = actionButton(
    'Clear',
    async () => {
      setFieldError(name, '');
      setFieldError(token, '');
      if (needName()) return;
      const id = agentId();
      try {
        const body = (await request('DELETE', credentialPath(id))).body;
        token.input.value = '';
        state.textContent = describe(id, body.credential);
      } catch (e) {
        if (!(e instanceof ApiError)) throw e;
        setFieldError(name, refusal(e));
      }
    },
    { class: 'secondary', id: 'credential-clear' },
  );
  const form = h(
    'form',
    {
      class: 'card',
      'aria-label': 'Endpoint credential',
      autocomplete: 'off',
      on: {
        submit: (event) => event.preventDefault(),
      },
    },
    name.row,
    datalist,
    token.row,
    h('p', {}, setButton, clearButton),
    state,
  );
  name.input.addEventListener('focus', () => {
    fill(
      datalist,
      out.knownAgents().map((id) => h('option', { value: id.replace(`${handle}/`, '') })),
    );
  });
  out.node = section(
    'Endpoint credential',
    h(
      'p',
      {},
      'If your server checks a token, give it here once. It can be set before the first version is published, so that the draft and the evaluation get through.',
    ),
    form,
  );
  return out;
}

// ------------------------------------------------------------------------------------------------ (c) my agents

function myAgents(p, pageStatus) {
  const body = h('div', { id: 'my-agents' }, h('p', { class: 'loading', role: 'status' }, 'Loading your agents…'));
  const out = {
    node: section('My agents', body),
    agentIds: () => ids,
    onChangeToken: () => {},
    reload,
  };
  let ids = [];
  let last = null;
  let timer;
  let left = false;
  /** Each read of /v0/me/agents has a number: an answer older than the latest read is dropped. */
  let generation = 0;
  const evaluationBoxes = new Map();
  p.onLeave(() => {
    left = true;
    clearTimeout(timer);
  });

  const pending = (data) =>
    data.versions.some(
      (v) => v.listed && (v.evaluation?.status === 'pending' || v.evaluation?.suites?.some((s) => s.status === 'queued' || s.status === 'running')),
    );

  function schedule() {
    clearTimeout(timer);
    if (!left && last && pending(last)) timer = setTimeout(poll, 4000);
  }

  /** While an evaluation runs: refresh only the evaluation blocks, so nobody loses their place on the page. */
  async function poll() {
    if (left) return;
    const mine = ++generation;
    let data;
    try {
      data = await get('/v0/me/agents');
    } catch {
      if (mine === generation) schedule();
      return;
    }
    if (left || mine !== generation) return;
    const sameVersions =
      JSON.stringify(data.versions.map((v) => [v.agent, v.version, v.listed])) === JSON.stringify(last.versions.map((v) => [v.agent, v.version, v.listed]));
    if (!sameVersions) {
      last = data;
      draw(data);
    } else {
      for (const v of data.versions) {
        const key = `${v.agent}@${v.version}`;
        const before = last.versions.find((x) => `${x.agent}@${x.version}` === key);
        if (JSON.stringify(before?.evaluation) !== JSON.stringify(v.evaluation))
          evaluationBoxes.get(key)?.replaceChildren(...evaluationView(v.evaluation).flat());
      }
      last = data;
    }
    schedule();
  }

  async function reload() {
    clearTimeout(timer);
    const mine = ++generation;
    let data;
    try {
      data = await get('/v0/me/agents');
    } catch (e) {
      if (!(e instanceof ApiError)) throw e;
      fill(body, notice('error', 'Your agents could not be read: ', sentence(e.message), ' Reload the page to try again.'));
      return;
    }
    if (left || mine !== generation) return;
    last = data;
    draw(data);
    schedule();
  }

  function draw(data) {
    ids = [...new Set(data.versions.map((v) => v.agent))];
    evaluationBoxes.clear();
    if (!data.versions.length) {
      fill(
        body,
        h(
          'p',
          { class: 'empty' },
          'You have not published an agent yet. Connect a webhook above, or publish a manifest from a terminal with holon publish holon.yaml.',
        ),
      );
      return;
    }
    const t = data.totals ?? {};
    fill(
      body,
      h(
        'div',
        { class: 'card' },
        h(
          'dl',
          { class: 'facts' },
          h('dt', {}, 'Earned in all'),
          h('dd', { id: 'earned-total' }, amounts(t.total)),
          h('dt', {}, 'Your share of paid calls'),
          h('dd', {}, amounts(t.share)),
          h('dt', {}, 'Royalties from forks'),
          h('dd', {}, amounts(t.royalties)),
          Object.keys(t.unattributed ?? {}).length && amounts(t.unattributed) !== 'nothing yet'
            ? [h('dt', {}, 'Not attributed to a version'), h('dd', {}, amounts(t.unattributed))]
            : null,
        ),
        h('p', { class: 'hint' }, 'Demo money, read from the journal. Your earnings are ', String(data.definition ?? '').replace(/\.?$/, '.')),
        data.credentials_note ? h('p', { class: 'hint' }, sentence(data.credentials_note)) : null,
      ),
      ids.map((id) =>
        agentCard(
          id,
          data.versions.filter((v) => v.agent === id),
        ),
      ),
    );
  }

  function agentCard(id, versions) {
    const credential = versions[0]?.credential;
    const listedOne = versions.some((v) => v.listed);
    const total = addAmounts(versions.map((v) => v.earnings?.total));
    return h(
      'article',
      { class: 'card', 'aria-labelledby': `agent-${id.replace(/[^a-z0-9-]/g, '-')}` },
      h('h3', { id: `agent-${id.replace(/[^a-z0-9-]/g, '-')}` }, listedOne ? h('a', { href: `#/try/${agentPath(id)}` }, id) : id),
      h(
        'p',
        {},
        'Endpoint token: ',
        credential === null || credential === undefined
          ? 'unknown on this gateway'
          : credential.set
            ? `set${credential.set_at ? ` since ${when(credential.set_at)}` : ''}`
            : 'not set',
        '. ',
        h('button', { type: 'button', class: 'link', on: { click: () => out.onChangeToken(id) } }, credential?.set ? 'Change or clear it' : 'Set one'),
      ),
      h('p', {}, `Earned by every version of ${id}: `, h('strong', {}, amounts(total)), '.'),
      [...versions].reverse().map((v) => versionBlock(v)),
    );
  }

  function versionBlock(v) {
    const key = `${v.agent}@${v.version}`;
    const actions = h('div', {});
    const outcome = h('p', { role: 'status', tabindex: '-1', 'data-outcome': key });
    const evalBox = h('div', {}, evaluationView(v.evaluation));
    evaluationBoxes.set(key, evalBox);
    const e = v.earnings ?? {};

    function showActions() {
      fill(
        actions,
        v.listed
          ? [
              actionButton('Re-run evaluation', () => rerun(), { class: 'secondary' }),
              h('button', { type: 'button', class: 'danger', on: { click: confirmYank } }, `Yank ${v.version}`),
            ]
          : null,
      );
    }

    async function rerun() {
      outcome.textContent = '';
      try {
        const r = (await request('POST', `${versionPath(v.agent, v.version)}/evaluate`, {})).body;
        const suites = (r.evaluation?.suites ?? []).map((s) => s.capability);
        outcome.textContent = `Evaluation queued${suites.length ? ` on ${suites.join(', ')}` : ''}. The results appear here as the cases are judged.`;
        const fresh = { ...v.evaluation, ...r.evaluation };
        evalBox.replaceChildren(...evaluationView(fresh).flat());
        if (last) {
          last = { ...last, versions: last.versions.map((x) => (`${x.agent}@${x.version}` === key ? { ...x, evaluation: fresh } : x)) };
          schedule();
        }
      } catch (err) {
        if (!(err instanceof ApiError)) throw err;
        outcome.textContent = `${sentence(err.message)}${err.status === 429 ? ' Re-runs are limited per hour: try again later.' : ''}`;
      }
    }

    function confirmYank() {
      outcome.textContent = '';
      const cancel = h(
        'button',
        {
          type: 'button',
          class: 'secondary',
          on: {
            click: () => {
              showActions();
              actions.querySelector('button.danger')?.focus();
            },
          },
        },
        'Cancel',
      );
      const yes = actionButton(`Yes, yank ${v.version}`, yank, { class: 'danger' });
      const question = h(
        'div',
        {
          role: 'group',
          'aria-label': `Confirm yanking ${key}`,
          on: {
            keydown: (event) => {
              if (event.key === 'Escape') cancel.click();
            },
          },
        },
        h(
          'p',
          {},
          h('strong', {}, `Yank ${key}? `),
          `It stops being listed at once. Calls already admitted and royalties of its forks still settle. The number ${v.version} can never be published again.`,
        ),
        yes,
        cancel,
      );
      fill(actions, question);
      cancel.focus();
    }

    async function yank() {
      try {
        await request('DELETE', versionPath(v.agent, v.version));
      } catch (err) {
        if (!(err instanceof ApiError)) throw err;
        showActions();
        outcome.textContent = sentence(err.message);
        return;
      }
      await reload();
      // The version is drawn again (now yanked): say so there, and put the focus there, not back at the top.
      const said = `Yanked ${key}: it is no longer listed. Its number stays taken.`;
      const there = body.querySelector(`[data-outcome="${CSS.escape(key)}"]`) ?? pageStatus;
      there.textContent = said;
      there.focus();
    }

    showActions();
    return h(
      'section',
      { 'aria-label': key },
      h('h4', {}, `Version ${v.version} `, h('span', { class: `status ${v.listed ? 's-succeeded' : 's-failed'}` }, v.listed ? 'listed' : 'yanked')),
      h(
        'dl',
        { class: 'facts' },
        h('dt', {}, 'Listed'),
        h('dd', {}, when(v.listed_at), v.yanked_at ? `; yanked ${when(v.yanked_at)}` : ''),
        h('dt', {}, 'License'),
        h('dd', {}, v.proprietary ? 'Proprietary' : (v.license ?? '—')),
        h('dt', {}, 'Earned'),
        h(
          'dd',
          {},
          amounts(e.total),
          ` (${e.paid_calls ?? 0} paid call${e.paid_calls === 1 ? '' : 's'}: ${amounts(e.share)}`,
          e.fork_calls ? `; ${e.fork_calls} call${e.fork_calls === 1 ? '' : 's'} to forks: ${amounts(e.royalties)} in royalties` : '',
          ')',
        ),
      ),
      h('h5', {}, 'Evaluation'),
      evalBox,
      actions,
      outcome,
    );
  }

  return out;
}
