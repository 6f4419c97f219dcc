/**
 * `holon publish <holon.yaml> [--url URL | HOLON_URL] [--key KEY | HOLON_KEY] [--json]`: send a manifest (YAML or
 * JSON) to a hosted gateway's `POST /v0/agents` with a human key (gateway.md §7 "Publishing agents"), then print
 * the listed version or every failed condition with its path. Exit 0 when listed, 1 when refused (or the file
 * cannot be read, or the gateway not reached), 2 when the command is misused.
 */
import { readFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { createHolonClient, HolonApiError, type Manifest } from 'holon/client';
import { parseDocumentText } from '../../shared/core/documents.js';
import type { Problem } from '../../shared/core/errors.js';

const USAGE = 'usage: holon publish <holon.yaml> [--url URL] [--key hlk_h_…] [--json]  (or HOLON_URL, HOLON_KEY)\n';

interface PublishReport {
  file: string;
  listed: boolean;
  /** The HTTP status, when the gateway answered. */
  status?: number;
  /** The gateway's answer: the listed version, or `{error: {code, message, problems?}}`. */
  answer?: unknown;
  problems: Problem[];
}

async function readManifest(file: string): Promise<{ ok: true; value: unknown } | { ok: false; problems: Problem[] }> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (e) {
    return { ok: false, problems: [{ path: '$', message: `cannot read the file: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}` }] };
  }
  return parseDocumentText(text, /\.json$/i.test(file) ? 'json' : /\.ya?ml$/i.test(file) ? 'yaml' : undefined);
}

async function publishFile(file: string, url: string, key: string): Promise<PublishReport> {
  const doc = await readManifest(file);
  if (!doc.ok) return { file, listed: false, problems: doc.problems };
  // The origin, as before: `--url https://host/x` publishes to https://host/v0/agents.
  const holon = createHolonClient({ baseUrl: new URL(url).origin, key });
  try {
    // Sent as read: the gateway checks the manifest and lists every failed condition (problems, below).
    const answer = await holon.publish(doc.value as Manifest);
    return { file, listed: true, status: 201, answer, problems: [] };
  } catch (e) {
    if (!(e instanceof HolonApiError)) return { file, listed: false, problems: [{ path: '$', message: `could not reach ${url}: ${(e as Error).message}` }] };
    const problems = e.error?.problems ?? [{ path: '$', message: e.message }];
    return { file, listed: false, status: e.status, answer: e.body, problems };
  }
}

function formatPublishReport(r: PublishReport): string {
  const a = r.answer as { agent?: string; version?: string; source?: unknown; error?: { code?: string; message?: string } } | undefined;
  if (r.listed) {
    const source = typeof a?.source === 'object' && a.source ? `source ${(a.source as { repository: string }).repository}` : 'proprietary';
    return `✓ ${r.file}: listed ${a?.agent}@${a?.version} (${source})\n`;
  }
  const head = r.status === undefined ? 'not sent' : `refused, HTTP ${r.status} ${a?.error?.code ?? ''}`.trimEnd();
  const why = a?.error?.message ? `: ${a.error.message}` : '';
  return `✗ ${r.file}: ${head}${why}\n` + r.problems.map((p) => `    ${p.path}: ${p.message}\n`).join('');
}

export async function publishCommand(argv: string[], env: NodeJS.ProcessEnv = process.env): Promise<number> {
  const options = { json: { type: 'boolean', default: false }, url: { type: 'string' }, key: { type: 'string' } } as const;
  let parsed: ReturnType<typeof parseArgs<{ args: string[]; allowPositionals: true; options: typeof options }>>;
  try {
    parsed = parseArgs({ args: argv, allowPositionals: true, options });
  } catch (e) {
    process.stderr.write(`holon publish: ${(e as Error).message}\n${USAGE}`);
    return 2;
  }
  const url = parsed.values.url ?? env.HOLON_URL;
  const key = parsed.values.key ?? env.HOLON_KEY;
  const missing = [
    parsed.positionals.length !== 1 ? 'one manifest file' : null,
    url ? null : 'the gateway (--url or HOLON_URL)',
    key ? null : 'a human key (--key or HOLON_KEY)',
  ].filter(Boolean);
  if (missing.length) {
    process.stderr.write(`holon publish: needs ${missing.join(', ')}\n${USAGE}`);
    return 2;
  }
  try {
    new URL(url!);
  } catch {
    process.stderr.write(`holon publish: ${url} is not a URL\n${USAGE}`);
    return 2;
  }
  const report = await publishFile(parsed.positionals[0]!, url!, key!);
  process.stdout.write(parsed.values.json ? `${JSON.stringify(report, null, 2)}\n` : formatPublishReport(report));
  return report.listed ? 0 : 1;
}
