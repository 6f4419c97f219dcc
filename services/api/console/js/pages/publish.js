// @ts-check
// Publish (#/publish, human keys): connect a webhook (draft a listing from one real call, review the YAML,
// publish it: publish/connect.js), set the endpoint credential of an agent (write-only: publish/credential.js), and
// watch your versions: listed or yanked, their evaluations, what each earned (publish/my-agents.js). Every text an
// author, an endpoint or the gateway wrote is shown as text.

import { get } from '../api.js';
import { h } from '../dom.js';
import { page } from '../format.js';
import { connectSection } from './publish/connect.js';
import { credentialSection } from './publish/credential.js';
import { myAgents } from './publish/my-agents.js';
import { githubLinked, githubNotice } from './publish/shared.js';

/** @param {import('../app.js').PageContext} p */
export async function render(p) {
  /** @type {import('../api-types.js').HumanMe} */
  const me = await get('/v0/me');
  const handle = me.account?.handle ?? (p.who.kind === 'human' ? p.who.handle : '');
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
