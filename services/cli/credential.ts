/**
 * `holon credential set <ns/name>` / `holon credential delete <ns/name>` [--url URL | HOLON_URL] [--key KEY |
 * HOLON_KEY]: an agent's endpoint credential on a hosted gateway (gateway.md §7 "Authentication"). The token is
 * never an argument (it would be in the shell history and the process list): `set` reads it from stdin (one final
 * newline trimmed) or, on a terminal, prompts for it without echo. Exit 0 done, 1 refused or unreachable, 2 misused.
 */
import { parseArgs } from 'node:util';
import { createHolonClient, HolonApiError } from 'holon/client';
import { isAgentId } from '../../shared/core/identifiers.js';

const USAGE = 'usage: holon credential set|delete <ns/name> [--url URL] [--key hlk_h_…]  (or HOLON_URL, HOLON_KEY; the token on stdin)\n';

export interface CredentialIo {
  stdin: NodeJS.ReadableStream & { isTTY?: boolean; setRawMode?: (raw: boolean) => unknown };
  stdout: { write(s: string): unknown };
  stderr: { write(s: string): unknown };
}

const defaultIo = (): CredentialIo => ({ stdin: process.stdin, stdout: process.stdout, stderr: process.stderr });

/** Everything on stdin, less one final newline. */
async function readPiped(stdin: CredentialIo['stdin']): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of stdin) chunks.push(typeof c === 'string' ? Buffer.from(c) : (c as Buffer));
  return Buffer.concat(chunks)
    .toString('utf8')
    .replace(/\r?\n$/, '');
}

/** A prompt on a terminal, in raw mode so nothing typed is echoed; Enter ends it, Ctrl-C or Ctrl-D abandons it. */
function readHidden(io: CredentialIo): Promise<string | undefined> {
  const { stdin } = io;
  io.stderr.write('token (not shown): ');
  stdin.setRawMode?.(true);
  stdin.resume();
  return new Promise((resolve) => {
    let typed = '';
    const done = (value: string | undefined) => {
      stdin.removeListener('data', onData);
      stdin.setRawMode?.(false);
      stdin.pause();
      io.stderr.write('\n');
      resolve(value);
    };
    const onData = (chunk: Buffer | string) => {
      for (const ch of chunk.toString()) {
        if (ch === '\r' || ch === '\n') return done(typed);
        if (ch === '\u0003' || ch === '\u0004') return done(undefined);
        if (ch === '\u007f' || ch === '\b') typed = typed.slice(0, -1);
        else typed += ch;
      }
    };
    stdin.on('data', onData);
  });
}

/** What one request to the credential route does, and where. */
interface CredentialRequest {
  url: string;
  key: string;
  agent: string;
  action: 'set' | 'delete';
  token?: string;
}

/** One request to the credential route; the answer's message, never the token. */
async function request({ url, key, agent, action, token }: CredentialRequest): Promise<{ ok: boolean; line: string }> {
  const holon = createHolonClient({ baseUrl: new URL(url).origin, key });
  try {
    if (action === 'delete') {
      await holon.credential.delete(agent);
      return { ok: true, line: `credential deleted for ${agent}` };
    }
    const answer = await holon.credential.set(agent, token ?? '');
    return { ok: true, line: `credential set for ${agent} (${answer.credential.set_at ?? 'now'})` };
  } catch (e) {
    if (e instanceof HolonApiError) return { ok: false, line: `refused, HTTP ${e.status} ${e.error?.code ?? ''}: ${e.error?.message ?? 'no message'}` };
    return { ok: false, line: `could not reach ${url}: ${(e as Error).message}` };
  }
}

export async function credentialCommand(argv: string[], env: NodeJS.ProcessEnv = process.env, io: CredentialIo = defaultIo()): Promise<number> {
  const misused = (why: string) => {
    io.stderr.write(`holon credential: ${why}\n${USAGE}`);
    return 2;
  };
  let values: { url?: string; key?: string };
  let positionals: string[];
  try {
    ({ values, positionals } = parseArgs({ args: argv, allowPositionals: true, options: { url: { type: 'string' }, key: { type: 'string' } } }));
  } catch (e) {
    return misused((e as Error).message);
  }
  const [action, agent, ...extra] = positionals;
  if (action !== 'set' && action !== 'delete') return misused('the first argument is set or delete');
  if (agent === undefined || !isAgentId(agent)) return misused('name the agent as <ns/name>');
  if (extra.length) return misused('the token is read from stdin, never from the arguments');
  const url = values.url ?? env.HOLON_URL;
  const key = values.key ?? env.HOLON_KEY;
  if (!url || !URL.canParse(url)) return misused('needs the gateway URL (--url or HOLON_URL)');
  if (!key) return misused('needs a human key (--key or HOLON_KEY)');

  let token: string | undefined;
  if (action === 'set') {
    token = io.stdin.isTTY ? await readHidden(io) : await readPiped(io.stdin);
    if (!token) {
      io.stderr.write('holon credential: no token given\n');
      return 1;
    }
  }
  const r = await request({ url, key, agent, action, token });
  (r.ok ? io.stdout : io.stderr).write(`${r.ok ? '✓' : '✗'} ${r.line}\n`);
  return r.ok ? 0 : 1;
}
