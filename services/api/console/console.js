// The console's sign-in step (gateway.md §7 "Sign in with GitHub"): GitHub's callback sends the browser to
// /console#login=<code> (or #login_error=<reason>). The code is read from the fragment, which never reaches a server
// log, removed from the address bar at once, and traded once with POST /v0/auth/exchange for the keys, which are
// shown once and kept nowhere (no storage, no cookie).

const REASONS = {
  denied: 'You did not authorise Holon on GitHub.',
  invalid_state: 'The sign-in link is unknown, used, expired or from another browser. Sign in again from this page.',
  github_unavailable: 'GitHub could not be reached or refused the sign-in. Try again in a moment.',
  no_verified_email: 'Your GitHub account has no verified primary email. Verify one on GitHub, then sign in again.',
  email_unavailable: 'The account with your email is linked to another GitHub account.',
  handle_unavailable: 'Your GitHub login cannot be used as a Holon handle (taken or reserved).',
  account_disabled: 'This account is disabled.',
};

function show(id) {
  for (const section of document.querySelectorAll('main > section')) section.hidden = section.id !== id;
}

function fail(message) {
  document.getElementById('failure').textContent = message;
  show('failed');
}

async function exchange(code) {
  show('working');
  let response;
  let body;
  try {
    response = await fetch('/v0/auth/exchange', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ code }),
      credentials: 'omit',
      cache: 'no-store',
    });
    body = await response.json();
  } catch {
    fail('The gateway could not be reached. Sign in again.');
    return;
  }
  if (!response.ok) {
    fail(body?.error?.message || `The gateway answered ${response.status}.`);
    return;
  }
  document.getElementById('handle').textContent = body.handle;
  document.getElementById('note').textContent = body.note || '';
  document.getElementById('human-key').textContent = body.keys.human.key;
  document.getElementById('human-expires').textContent = new Date(body.keys.human.expires_at).toUTCString();
  if (body.keys.agent) {
    document.getElementById('agent-key').textContent = body.keys.agent.key;
    document.getElementById('agent-label').hidden = false;
    document.getElementById('agent-row').hidden = false;
  }
  show('signed-in');
}

const fragment = new URLSearchParams(location.hash.slice(1));
if (location.hash) history.replaceState(null, '', location.pathname);
const code = fragment.get('login');
const reason = fragment.get('login_error');
if (code) exchange(code);
else if (reason) fail(REASONS[reason] || 'The sign-in was refused. Sign in again.');
else show('signed-out');
