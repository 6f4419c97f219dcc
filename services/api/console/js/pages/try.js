// @ts-check
// Try an agent (#/try, #/try/<ns>/<name>): find an agent in the catalogue, read what it offers and what Holon
// measured of it, and call it under one of your mandates. The output is shown as text, with the call's receipt.

import { ApiError, get, qs, request } from '../api.js';
import { actionButton, field, fill, foldedText, h, notice, setFieldError } from '../dom.js';
import { page, section } from '../format.js';
import { money } from '../money.js';
import { agentRecord, describeProblem, GATEWAY_ERRORS, evaluationView, plainParagraphs, priceText, receiptFacts, recordLine, sentence } from '../agent-view.js';

const DECISION_WORDS = { allow: 'allowed', approve: 'allowed after a human approves it' };

/** The mandates the console may call under: [{id, label}], the sandbox first. */
async function loadMandates() {
  const body = await get('/v0/mandates');
  const list = (body?.mandates ?? []).map((m) => {
    const b = m.budget ?? {};
    const left = b.remaining !== undefined ? ` (${money(b.remaining, b.currency)} of ${money(b.total, b.currency)} left)` : '';
    return { value: m.mandate.id, label: `${m.mandate.id}${left}` };
  });
  list.sort((a, b) => Number(b.value.endsWith('/sandbox')) - Number(a.value.endsWith('/sandbox')));
  return list;
}

const agentHash = (id, query) => `#/try/${id.split('/').map(encodeURIComponent).join('/')}${qs(query)}`;

export async function render(p) {
  const [ns, name] = p.params;
  let mandates = [];
  let mandateProblem = null;
  try {
    mandates = await loadMandates();
  } catch (e) {
    if (!(e instanceof ApiError)) throw e;
    mandateProblem = e.message;
  }
  if (ns && name) return agentPage(p, `${ns}/${name}`, mandates, mandateProblem);
  return searchPage(p, mandates, mandateProblem);
}

// ------------------------------------------------------------------------------------------------ search

function searchPage(p, mandates, mandateProblem) {
  const initialMandate = p.query.get('mandate') ?? mandates[0]?.value ?? '';
  const q = field({
    label: 'Search agents',
    name: 'q',
    type: 'search',
    value: p.query.get('q') ?? '',
    hint: 'Words, such as “profile this CSV” or “upper case”: agents matching any of them, most relevant first. Leave it empty to see every agent.',
  });
  const mandate = mandates.length
    ? field({
        label: 'Show costs under',
        name: 'mandate',
        options: [...mandates, { value: '', label: 'No mandate: list prices only' }],
        value: initialMandate,
        hint: 'With a mandate, each agent shows its worst case in the mandate’s currency and whether the mandate allows it.',
      })
    : null;
  const statusLine = h('p', { role: 'status', class: 'loading' });
  const results = h('div', { id: 'try-results' });
  let sequence = 0;

  async function search() {
    const mine = ++sequence;
    const query = { q: q.input.value.trim(), mandate: mandate?.input.value || undefined };
    statusLine.className = 'loading';
    statusLine.textContent = 'Searching…';
    results.setAttribute('aria-busy', 'true');
    let body;
    try {
      body = await get(`/v0/agents${qs(query)}`);
    } catch (e) {
      if (mine !== sequence) return;
      results.removeAttribute('aria-busy');
      statusLine.textContent = '';
      fill(results, notice('error', 'The catalogue could not be searched: ', sentence(e.message), ' Try again.'));
      return;
    }
    if (mine !== sequence) return;
    results.removeAttribute('aria-busy');
    const agents = body?.agents ?? [];
    const denied = body?.denied ?? [];
    statusLine.className = '';
    statusLine.textContent = agents.length ? `${agents.length} agent${agents.length === 1 ? '' : 's'} found${query.q ? ` for “${query.q}”` : ''}.` : '';
    const back = { q: query.q || undefined, mandate: query.mandate };
    fill(
      results,
      agents.length
        ? h(
            'div',
            { class: 'grid' },
            agents.map((a) => resultCard(a, back, body.currency)),
          )
        : h(
            'p',
            { class: 'empty' },
            query.q
              ? `No agent matches “${query.q}”${denied.length ? ' that this mandate allows' : ''}. Try a shorter word, or clear the box to see every agent.`
              : 'No agent is listed on this gateway yet.',
          ),
      denied.length
        ? h(
            'details',
            {},
            h('summary', {}, `${denied.length} more agent${denied.length === 1 ? '' : 's'} that ${query.mandate} does not allow`),
            h(
              'ul',
              {},
              denied.map((d) =>
                h('li', {}, h('a', { href: agentHash(d.id, back) }, `${d.id}@${d.version}`), ': ', (d.reasons ?? []).map((r) => sentence(r)).join(' ')),
              ),
            ),
          )
        : null,
    );
  }

  let timer;
  q.input.addEventListener('input', () => {
    clearTimeout(timer);
    timer = setTimeout(search, 300);
  });
  mandate?.input.addEventListener('change', search);
  p.onLeave(() => {
    clearTimeout(timer);
    sequence++;
  });
  const form = h(
    'form',
    {
      role: 'search',
      class: 'filters',
      'aria-label': 'Search the catalogue',
      on: {
        submit: (event) => {
          event.preventDefault();
          clearTimeout(timer);
          search();
        },
      },
    },
    q.row,
    mandate?.row,
    h('div', { class: 'field' }, h('button', { type: 'submit' }, 'Search')),
  );
  search();
  return page(
    'Try an agent',
    'Pick an agent from the catalogue, call it with an example input, and read the receipt: what it cost and who was paid.',
    p.who.kind === 'operator'
      ? notice(
          'info',
          'This is a dev gateway: you act as its local operator, with no key. The dev mandates (such as demo/sandbox) pay for your calls with demo credit, so trying costs nothing real.',
        )
      : null,
    mandateProblem ? notice('error', 'Your mandates could not be read: ', sentence(mandateProblem), ' You can still browse the catalogue.') : null,
    form,
    section('Agents', statusLine, results),
  );
}

function resultCard(a, back, currency) {
  const record = a.record;
  return h(
    'article',
    { class: 'card', 'aria-label': a.id },
    h('h3', {}, h('a', { href: agentHash(a.id, back) }, a.id), ' ', h('span', { class: 'hint' }, a.version)),
    h('p', {}, a.summary),
    h(
      'dl',
      { class: 'facts' },
      h('dt', {}, 'Price'),
      h('dd', {}, priceText(a.pricing)),
      a.worst_case !== undefined
        ? [h('dt', {}, 'Worst case'), h('dd', {}, a.worst_case === null ? 'Cannot be converted to the mandate’s currency' : money(a.worst_case, currency))]
        : null,
      a.decision ? [h('dt', {}, 'Mandate'), h('dd', {}, DECISION_WORDS[a.decision] ?? a.decision)] : null,
      h('dt', {}, 'Measured'),
      h('dd', {}, recordLine(record)),
      a.capabilities?.length ? [h('dt', {}, 'Capabilities'), h('dd', {}, a.capabilities.join(', '))] : null,
      a.license === 'proprietary' ? [h('dt', {}, 'License'), h('dd', {}, 'Proprietary: its code is not public')] : null,
    ),
    h('p', {}, h('a', { class: 'button', href: agentHash(a.id, back) }, 'Try it', h('span', { class: 'visually-hidden' }, ` ${a.id}`))),
  );
}

// ------------------------------------------------------------------------------------------------ one agent

function declaredErrors(errors) {
  const entries = Object.entries(errors ?? {});
  if (!entries.length) return h('p', {}, 'It declares no error of its own: any failure is never billed.');
  return h(
    'ul',
    {},
    entries.map(([code, e]) => h('li', {}, h('code', {}, code), `: ${sentence(e.description)} `, e.billed ? h('strong', {}, 'Billed.') : 'Not billed.')),
  );
}

function dataPolicy(data, runtime) {
  if (!data) return null;
  const rows = [
    ['Keeps inputs', data.retention === null ? 'Not declared' : data.retention === 'none' ? 'No' : `For ${data.retention}`],
    ['Trains on inputs', data.training === null ? 'Not declared' : data.training ? 'Yes' : 'No'],
    ['Regions', data.region?.length ? data.region.join(', ') : 'Not declared'],
    ['Subprocessors', data.subprocessors?.length ? data.subprocessors.join(', ') : 'Not declared'],
  ];
  return [
    h(
      'dl',
      { class: 'facts' },
      rows.map(([t, d]) => [h('dt', {}, t), h('dd', {}, d)]),
    ),
    h(
      'p',
      { class: 'hint' },
      sentence(data.note),
      runtime?.attested ? ` It ${runtime.note ?? 'runs on its author’s server'}.` : ' It runs inside the gateway’s own runtime.',
    ),
  ];
}

async function agentPage(p, id, mandates, mandateProblem) {
  let agent;
  try {
    agent = await get(`/v0/agents/${id.split('/').map(encodeURIComponent).join('/')}`);
  } catch (e) {
    if (e instanceof ApiError && (e.status === 404 || e.status === 400)) {
      return page(
        'Try an agent',
        null,
        notice(
          'error',
          `No agent ${id} is listed here. `,
          'It may have been withdrawn, or the address has a typo. ',
          h('a', { href: '#/try' }, 'Search the catalogue'),
          '.',
        ),
      );
    }
    throw e;
  }
  const backQuery = { q: p.query.get('q') || undefined, mandate: p.query.get('mandate') || undefined };
  const examples = Array.isArray(agent.manifest?.interface?.examples)
    ? agent.manifest.interface.examples.filter((x) => x && typeof x === 'object' && 'input' in x)
    : [];
  const exampleText = (i) => JSON.stringify(examples[i]?.input ?? {}, null, 2);

  const input = field({
    label: 'Input (JSON)',
    name: 'input',
    type: 'textarea',
    rows: Math.min(16, Math.max(5, exampleText(0).split('\n').length + 1)),
    value: exampleText(0),
    hint: examples.length
      ? 'Pre-filled with the agent’s own example. Change it as you like: it must be JSON.'
      : 'The agent gives no example; write the input as JSON.',
  });
  const mandate = mandates.length
    ? field({
        label: 'Call under the mandate',
        name: 'mandate',
        options: mandates,
        value: p.query.get('mandate') && mandates.some((m) => m.value === p.query.get('mandate')) ? p.query.get('mandate') : mandates[0].value,
        hint: 'The mandate pays for the call and decides whether it may happen.',
      })
    : null;
  const admission = h('p', { role: 'status' });
  const recordBox = h('div', {}, agentRecord(agent));
  const outcome = h('div', { id: 'try-outcome' });
  let left = false;
  p.onLeave(() => {
    left = true;
  });

  async function checkAdmission() {
    if (!mandate) return;
    const m = mandate.input.value;
    admission.textContent = '';
    try {
      const body = await get(`/v0/agents${qs({ q: id, mandate: m })}`);
      const allowed = (body.agents ?? []).find((a) => a.id === id);
      const denied = (body.denied ?? []).find((a) => a.id === id);
      if (mandate.input.value !== m) return;
      if (allowed) {
        const worst = allowed.worst_case === null ? 'an amount that cannot be converted' : money(allowed.worst_case, body.currency);
        admission.textContent =
          allowed.decision === 'approve'
            ? `Under ${m} a human must approve this call before it runs. Its worst case is ${worst}.`
            : `Under ${m} this call is allowed. At most ${worst} is reserved; only the real cost is charged.`;
      } else if (denied) {
        admission.textContent = `Under ${m} this call would be denied: ${(denied.reasons ?? []).map(sentence).join(' ')} Pick another mandate.`;
      }
    } catch {
      /* the Run answer will say it */
    }
  }
  mandate?.input.addEventListener('change', checkAdmission);

  const exampleButtons =
    examples.length > 1
      ? h(
          'p',
          {},
          'Start from: ',
          examples.map((_, i) =>
            h(
              'button',
              {
                type: 'button',
                class: 'secondary',
                on: {
                  click: () => {
                    input.input.value = exampleText(i);
                    setFieldError(input, '');
                    input.input.focus();
                  },
                },
              },
              `Example ${i + 1}`,
            ),
          ),
        )
      : null;

  async function run() {
    setFieldError(input, '');
    let value;
    try {
      value = JSON.parse(input.input.value);
    } catch (e) {
      setFieldError(input, `This is not valid JSON (${e.message}). Check the quotes, commas and brackets, then run again.`);
      input.input.focus();
      return;
    }
    if (!mandate) {
      fill(
        outcome,
        notice('error', 'You have no mandate to call under. ', h('a', { href: '#/mandates' }, 'Create one on Mandates and keys'), ', then come back.'),
      );
      return;
    }
    fill(outcome, h('p', { class: 'loading', role: 'status' }, `Calling ${id}…`));
    let answer;
    try {
      answer = await request('POST', '/v0/calls', { mandate: mandate.input.value, agent: id, input: value }, { any: true });
    } catch (e) {
      if (!(e instanceof ApiError)) throw e;
      fill(outcome, notice('error', sentence(e.message)));
      return;
    }
    // Still on its way past the synchronous wait: ask until it ends.
    while (!left && answer.status === 202 && answer.body?.call && !answer.body.receipt) {
      fill(outcome, h('p', { class: 'loading', role: 'status' }, `The call ${answer.body.call.id} is ${answer.body.call.status}; waiting for it to end…`));
      try {
        answer = await request('GET', `/v0/calls/${encodeURIComponent(answer.body.call.id)}?wait=25`, undefined, { any: true });
      } catch (e) {
        if (!(e instanceof ApiError)) throw e;
        fill(outcome, notice('error', 'The call was sent but its outcome could not be read: ', sentence(e.message), ' See it on the Calls page.'));
        return;
      }
      if (answer.status === 200 && !answer.body?.receipt) answer = { ...answer, status: 202 };
      else if (answer.status === 200 && answer.body?.call) {
        // GET /v0/calls/{id} answers 200 with the receipt: read it as POST /v0/calls would have answered.
        const r = answer.body.receipt;
        answer =
          r.status === 'succeeded' ? { status: 200, body: answer.body } : { status: 502, body: { ...answer.body, error: { code: r.error ?? 'agent_error' } } };
      }
    }
    if (left) return;
    showOutcome(answer);
  }

  /** After a run, the Agent Record shown counts it: read the agent again (quietly: the outcome is what matters). */
  async function refreshRecord() {
    try {
      const fresh = await get(`/v0/agents/${id.split('/').map(encodeURIComponent).join('/')}`);
      if (!left) fill(recordBox, agentRecord(fresh));
    } catch {
      /* the record stays as it was */
    }
  }

  function showOutcome(answer) {
    draw(answer);
    if (answer.body?.receipt && ['succeeded', 'failed'].includes(answer.body.receipt.status)) refreshRecord();
  }

  function draw({ status: code, body }) {
    const receipt = body?.receipt;
    const receiptPart = receipt ? [h('h3', {}, 'Receipt'), receiptFacts(receipt)] : [];
    const problems = body?.error?.problems ?? [];
    if (code === 200 && receipt?.status === 'succeeded') {
      const out = body.output;
      fill(
        outcome,
        notice('ok', `It worked: ${receipt.billed ? `${money(receipt.cost.total, receipt.currency)} was charged` : 'nothing was charged'}.`),
        h('h3', {}, 'Output'),
        out === null || out === undefined
          ? h('p', { class: 'empty' }, 'The output is no longer kept: it is handed over once, then forgotten.')
          : foldedText(JSON.stringify(out, null, 2), { summary: 'Show the whole output' }),
        receiptPart,
      );
      return;
    }
    if (code === 202 && body?.status === 'pending_approval') {
      fill(
        outcome,
        notice(
          'info',
          'The call is held: the mandate asks a human to approve it before it runs. Nothing is charged yet. ',
          h('a', { href: '#/approvals' }, 'Decide on Approvals'),
          '.',
        ),
        receiptPart,
      );
      return;
    }
    if (code === 422 && body?.error?.code === 'rejected_input') {
      setFieldError(input, problems.length ? problems.map(describeProblem).join(' ') : sentence(body.error.message));
      input.input.focus();
      fill(
        outcome,
        notice('error', 'The agent does not accept this input, so nothing ran and nothing was charged. Fix what is said under the input, then run again.'),
        receiptPart,
      );
      return;
    }
    if (code === 400 && problems.length) {
      const atInput = problems.filter((x) => String(x.path).startsWith('$.input'));
      if (atInput.length) setFieldError(input, atInput.map((x) => describeProblem({ ...x, path: String(x.path).replace(/^\$\.input/, '$') })).join(' '));
      const rest = problems.filter((x) => !String(x.path).startsWith('$.input'));
      fill(outcome, notice('error', 'The gateway refused the request. ', rest.map(describeProblem).join(' ') || 'See what is said under the input.'));
      return;
    }
    if (code === 502 && receipt) {
      const errorCode = body.error?.code ?? receipt.error ?? 'agent_error';
      const declared = agent.interface?.errors?.[errorCode];
      const meaning = declared ? sentence(declared.description) : GATEWAY_ERRORS[errorCode] ? sentence(GATEWAY_ERRORS[errorCode]) : '';
      fill(
        outcome,
        notice(
          'error',
          'The agent failed with the error ',
          h('code', {}, errorCode),
          meaning ? `: ${meaning} ` : '. ',
          receipt.billed ? `${money(receipt.cost.total, receipt.currency)} was charged, as its manifest declares for this error.` : 'Nothing was charged.',
        ),
        receiptPart,
      );
      return;
    }
    if (code === 403 && receipt) {
      fill(
        outcome,
        notice('error', 'The mandate does not allow this call, so nothing ran and nothing was charged: ', sentence(body.error?.message)),
        receiptPart,
      );
      return;
    }
    const message = body?.error?.message ? sentence(body.error.message) : `The gateway answered ${code}.`;
    const advice =
      code === 429
        ? ' Wait a moment, then run again.'
        : code === 409
          ? ' Check the Calls page before running it again.'
          : code >= 500
            ? ' Nothing was charged. Try again in a moment.'
            : '';
    fill(outcome, notice('error', message, advice), receiptPart);
  }

  const form = h(
    'form',
    {
      class: 'card',
      'aria-labelledby': 'try-run-heading',
      on: {
        submit: (event) => event.preventDefault(),
      },
    },
    h('h2', { id: 'try-run-heading' }, 'Call it'),
    mandateProblem ? notice('error', 'Your mandates could not be read: ', sentence(mandateProblem)) : null,
    !mandates.length && !mandateProblem
      ? notice(
          'info',
          'You have no mandate yet: a call needs one, to pay for it and to bound it. ',
          h('a', { href: '#/mandates' }, 'Create one on Mandates and keys'),
          '.',
        )
      : null,
    mandate?.row,
    admission,
    exampleButtons,
    input.row,
  );
  const runButton = actionButton('Run', run, { id: 'try-run', type: 'submit', disabled: !mandates.length });
  form.append(
    h('p', {}, runButton, h('span', { class: 'hint' }, ' Runs the agent once. Only a run that succeeds (or a declared billed error) is charged.')),
    outcome,
  );
  checkAdmission();

  return page(
    agent.id,
    agent.summary,
    h('p', {}, h('a', { href: `#/try${qs(backQuery)}` }, '← Back to the catalogue')),
    h(
      'div',
      { class: 'grid' },
      h(
        'div',
        {},
        section(
          'What it offers',
          agent.description ? plainParagraphs(agent.description) : null,
          h(
            'dl',
            { class: 'facts' },
            h('dt', {}, 'Version'),
            h('dd', {}, agent.version, agent.versions?.length > 1 ? ` (the highest of ${agent.versions.length} listed)` : ''),
            h('dt', {}, 'Price'),
            h('dd', {}, priceText(agent.pricing)),
            h('dt', {}, 'Capabilities'),
            h('dd', {}, (agent.capabilities ?? []).join(', ') || '—'),
            h('dt', {}, 'License'),
            h('dd', {}, agent.license === 'proprietary' ? 'Proprietary: its code is not public' : agent.license),
            h('dt', {}, 'Runs'),
            h('dd', {}, agent.runtime?.kind === 'node' ? 'Inside the gateway' : `On its author’s server (${agent.runtime?.kind})`),
          ),
          h('h3', {}, 'Errors it declares'),
          declaredErrors(agent.interface?.errors),
          h('h3', {}, 'Data policy, as declared'),
          dataPolicy(agent.data, agent.runtime),
        ),
      ),
      form,
    ),
    section('Agent Record', recordBox),
    section('Evaluation', evaluationView(agent.evaluation)),
  );
}
