/**
 * infra/: the image, compose and Kubernetes files name only what exists (docs/operating.md). Every YAML parses;
 * every `holon <command>` they run is a command of the CLI (services/cli/main.ts); every environment variable they
 * set is read by shared/platform/config.ts (or, for the agent host, by an agent of agents/); the Dockerfile copies
 * files that exist; the documented production settings pass the production check and fail without any one of the
 * required ones; runners get the longest hard timeout plus a margin to drain; every HTTP port has its probes; and the
 * entrypoint stops the gateway before the agent host its runs talk to. Docker and Kubernetes are not needed.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync, mkdirSync, copyFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { ConfigError, loadConfig } from '../../shared/platform/config.js';
import { SETTINGS } from '../../shared/platform/settings/index.js';
import { TRACING } from '../../shared/platform/settings/observability.js';
import { leaves } from '../../shared/platform/settings/walk.js';
import { poll } from '../support/poll.js';

const ROOT = path.resolve(import.meta.dirname, '../..');
const INFRA = path.join(ROOT, 'infra');
const read = (rel: string) => readFileSync(path.join(ROOT, rel), 'utf8');

type Doc = Record<string, unknown>;
const isRecord = (v: unknown): v is Doc => typeof v === 'object' && v !== null && !Array.isArray(v);
const records = (v: unknown): Doc[] => (Array.isArray(v) ? v.filter(isRecord) : []);

function yamlFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const full = path.join(dir, name);
    if (statSync(full).isDirectory()) return yamlFiles(full);
    return /\.ya?ml$/.test(name) ? [full] : [];
  });
}

function parseYaml(file: string): Doc[] {
  const docs = parseAllDocuments(readFileSync(file, 'utf8'), { merge: true });
  const list = Array.isArray(docs) ? docs : [docs];
  for (const d of list)
    expect(
      d.errors.map((e) => e.message),
      path.relative(ROOT, file),
    ).toEqual([]);
  return list.map((d) => d.toJS({ maxAliasCount: 100 }) as unknown).filter(isRecord);
}

// ---- what exists, derived from the sources

/** The commands of `holon`: the cases of main()'s switch (services/cli/main.ts). */
function cliCommands(): Set<string> {
  const source = read('services/cli/main.ts');
  const body = source.slice(source.indexOf('switch (command)'));
  const names = [...body.matchAll(/case '([a-z][a-z-]*)':/g)].map((m) => m[1]!);
  return new Set(names.filter((n) => n !== 'help'));
}

/** Every variable shared/platform/config.ts reads (its declarations, shared/platform/settings/), and those the agents of agents/ read from ctx.env. */
function knownVariables(): Set<string> {
  const names = new Set<string>();
  for (const { declared } of [...leaves(SETTINGS, undefined, undefined), ...leaves(TRACING, undefined, undefined)]) names.add(declared.env);
  for (const dir of readdirSync(path.join(ROOT, 'agents'))) {
    const tool = path.join(ROOT, 'agents', dir, 'tool.mjs');
    if (!existsSync(tool)) continue;
    for (const m of readFileSync(tool, 'utf8').matchAll(/\benv\.([A-Z][A-Z0-9_]*)/g)) names.add(m[1]!);
  }
  return names;
}

/** The largest runtime.limits.timeout_s a manifest may declare (shared/core/manifest/schema.ts). */
function longestTimeoutS(): number {
  const m = /timeout_s: \{[^}]*maximum: (\d+)/.exec(read('shared/core/manifest/schema.ts'));
  if (!m) throw new Error('no timeout_s maximum in shared/core/manifest/schema.ts');
  return Number(m[1]);
}

const MARGIN_S = 30;

// ---- what infra/ names

const dockerfile = read('infra/Dockerfile');
/** Dockerfile instructions, continuation lines joined, comments dropped. */
const instructions = dockerfile
  .replace(/\\\n/g, ' ')
  .split('\n')
  .map((l) => l.trim())
  .filter((l) => l && !l.startsWith('#'));

function envExample(file = 'infra/.env.example'): { set: Record<string, string>; named: string[] } {
  const set: Record<string, string> = {};
  const named: string[] = [];
  for (const line of read(file).split('\n')) {
    const m = /^(#\s*)?([A-Z][A-Z0-9_]*)=(.*)$/.exec(line.trim());
    if (!m) continue;
    named.push(m[2]!);
    if (!m[1]) set[m[2]!] = m[3]!;
  }
  return { set, named };
}

const compose = parseYaml(path.join(INFRA, 'compose.yaml'))[0]!;
const composeServices = compose.services as Record<string, Doc>;
const holonServices = Object.entries(composeServices).filter(([, s]) => s.image === 'holon:local');

const k8sDocs = yamlFiles(path.join(INFRA, 'k8s')).flatMap(parseYaml);
const ofKind = (kind: string) => k8sDocs.filter((d) => d.kind === kind);
const nameOf = (d: Doc) => (d.metadata as Doc).name as string;
const podSpec = (d: Doc) => ((d.spec as Doc).template as Doc).spec as Doc;
const holonContainers = (d: Doc) => records(podSpec(d).containers).filter((c) => c.image === 'holon');

/** `process.env.X` inside commands (healthchecks). */
const processEnv = (text: string) => [...text.matchAll(/process\.env\.([A-Z][A-Z0-9_]*)/g)].map((m) => m[1]!);

function secondsOf(duration: unknown): number {
  const m = /^(\d+)(s|m)$/.exec(String(duration));
  if (!m) throw new Error(`not a duration: ${String(duration)}`);
  return Number(m[1]) * (m[2] === 'm' ? 60 : 1);
}

describe('infra/', () => {
  it('every YAML file parses', () => {
    const files = yamlFiles(INFRA);
    expect(files.length).toBeGreaterThanOrEqual(9);
    for (const file of files) expect(parseYaml(file).length, path.relative(ROOT, file)).toBeGreaterThan(0);
  });

  it('every command they run is a command of the CLI', () => {
    const commands = cliCommands();
    expect(commands).toContain('api');
    const used: Array<[string, string]> = [];
    const cmd = instructions.find((l) => l.startsWith('CMD '));
    used.push(['Dockerfile CMD', (JSON.parse(cmd!.slice(4)) as string[])[0]!]);
    for (const [name, s] of holonServices) used.push([`compose ${name}`, (s.command as string[])[0]!]);
    for (const d of ofKind('Deployment')) for (const c of holonContainers(d)) used.push([`k8s ${nameOf(d)}`, (c.args as string[])[0]!]);
    expect(used.map(([, c]) => c).sort()).toEqual(expect.arrayContaining(['api', 'evaluator', 'runner', 'serve', 'settler']));
    for (const [where, command] of used) expect(commands.has(command), `${where}: holon ${command}`).toBe(true);
    // The entrypoint hands its arguments to bin/holon.mjs, and the image's ENTRYPOINT is it.
    expect(read('infra/entrypoint.sh')).toContain('node bin/holon.mjs "$@"');
    expect(instructions).toContain('ENTRYPOINT ["/app/infra/entrypoint.sh"]');
  });

  it('every environment variable they name is read by shared/platform/config.ts (or an agent)', () => {
    const known = knownVariables();
    expect(known).toContain('HOLON_TRUST_PROXY');
    const named: Array<[string, string]> = [];
    for (const l of instructions.filter((i) => i.startsWith('ENV '))) {
      for (const m of l.slice(4).matchAll(/([A-Z][A-Z0-9_]*)=/g)) named.push(['Dockerfile ENV', m[1]!]);
    }
    for (const v of processEnv(dockerfile)) named.push(['Dockerfile', v]);
    const composeText = read('infra/compose.yaml');
    for (const m of composeText.matchAll(/\$\{([A-Z][A-Z0-9_]*)/g)) named.push(['compose interpolation', m[1]!]);
    for (const [name, s] of holonServices) {
      const env = s.environment;
      for (const key of Array.isArray(env) ? env.map((e) => String(e).split('=')[0]!) : Object.keys(isRecord(env) ? env : {})) {
        named.push([`compose ${name}`, key]);
      }
      for (const v of processEnv(JSON.stringify(s.healthcheck ?? {}))) named.push([`compose ${name} healthcheck`, v]);
    }
    for (const v of envExample().named) named.push(['.env.example', v]);
    for (const d of [...ofKind('ConfigMap'), ...ofKind('Secret')]) {
      for (const key of Object.keys({ ...(d.data as Doc), ...(d.stringData as Doc) })) named.push([`k8s ${nameOf(d)}`, key]);
    }
    for (const d of ofKind('Deployment'))
      for (const c of holonContainers(d)) for (const e of records(c.env)) named.push([`k8s ${nameOf(d)}`, e.name as string]);
    expect(named.length).toBeGreaterThan(30);
    for (const [where, name] of named) expect(known.has(name), `${where}: ${name}`).toBe(true);
  });

  it("the Dockerfile's COPY sources exist, and the final image installs production dependencies only", () => {
    const copies = instructions.filter((l) => l.startsWith('COPY ') && !l.includes('--from='));
    expect(copies.length).toBeGreaterThan(5);
    for (const l of copies) {
      const parts = l.split(/\s+/).slice(1);
      for (const src of parts.slice(0, -1)) expect(existsSync(path.join(ROOT, src)), `COPY ${src}`).toBe(true);
    }
    expect(dockerfile).toMatch(/npm ci --omit=dev/);
    expect(instructions).toContain('USER node');
    expect(dockerfile).toMatch(/HEALTHCHECK [^\n]*\\\n\s*CMD [^\n]*\/healthz/);
    // No build step: the CLI runs TypeScript through tsx, which must then be a runtime dependency.
    const pkg = JSON.parse(read('package.json')) as { dependencies: Record<string, string>; bin: Record<string, string> };
    expect(read(pkg.bin.holon!)).toContain("from 'tsx/esm/api'");
    expect(Object.keys(pkg.dependencies)).toContain('tsx');
    // What the image needs is not excluded from the build context.
    const ignored = read('.dockerignore')
      .split('\n')
      .map((l) => l.trim())
      .filter((l) => l && !l.startsWith('#') && !l.startsWith('!'));
    for (const needed of ['bin', 'shared', 'services', 'agents', 'evals', 'infra/entrypoint.sh', 'package.json']) {
      expect(
        ignored.some((p) => p === needed || needed.startsWith(`${p}/`)),
        needed,
      ).toBe(false);
    }
    expect(ignored).toContain('**/.env');
  });

  it('.env.example passes the production check, and each required setting is needed', () => {
    const { set } = envExample();
    const config = loadConfig({ ...set });
    expect(config).toMatchObject({ production: true, hosted: true, trustProxy: true });
    for (const name of [
      'DATABASE_URL',
      'HOLON_PUBLIC_URL',
      'HOLON_SITE_URL',
      'HOLON_FILE_SECRET',
      'HOLON_ADMIN_KEY',
      'HOLON_SIGNING_KEY',
      'HOLON_TRUST_PROXY',
      'HOLON_HOSTED',
      'HOLON_PRIVATE_EVALS',
    ]) {
      const without = { ...set };
      delete without[name];
      expect(() => loadConfig(without), name).toThrow(ConfigError);
      expect(() => loadConfig(without), name).toThrow(name);
    }
  });

  it("the Kubernetes ConfigMap and Secret carry the same settings; the Secret's placeholders refuse to start", () => {
    const [configMap] = ofKind('ConfigMap');
    const [secret] = ofKind('Secret');
    const k8sEnv = { ...(configMap!.data as Record<string, string>), ...(secret!.stringData as Record<string, string>) };
    const { set } = envExample();
    for (const key of Object.keys(set)) expect(Object.keys(k8sEnv), key).toContain(key);
    // Secrets in the Secret, the rest in the ConfigMap.
    for (const key of ['DATABASE_URL', 'REDIS_URL', 'HOLON_FILE_SECRET', 'HOLON_ADMIN_KEY', 'HOLON_SIGNING_KEY', 'HOLON_GITHUB_CLIENT_SECRET']) {
      expect(Object.keys(secret!.stringData as Doc)).toContain(key);
      expect(Object.keys(configMap!.data as Doc)).not.toContain(key);
    }
    expect(() => loadConfig({ ...k8sEnv })).toThrow(/HOLON_FILE_SECRET[\s\S]*HOLON_ADMIN_KEY/);
    expect(loadConfig({ ...k8sEnv, HOLON_FILE_SECRET: set.HOLON_FILE_SECRET, HOLON_ADMIN_KEY: set.HOLON_ADMIN_KEY }).production).toBe(true);
    // Every Deployment reads both.
    for (const d of ofKind('Deployment')) {
      for (const c of holonContainers(d)) {
        const from = records(c.envFrom).map((e) => ((e.configMapRef ?? e.secretRef) as Doc).name);
        expect(from, nameOf(d)).toEqual([nameOf(configMap!), nameOf(secret!)]);
      }
    }
  });

  it('runners and evaluators may drain for the longest hard timeout plus a margin', () => {
    const needed = longestTimeoutS() + MARGIN_S;
    expect(longestTimeoutS()).toBe(300);
    for (const role of ['holon-runner', 'holon-evaluator']) {
      const d = ofKind('Deployment').find((x) => nameOf(x) === role)!;
      expect(podSpec(d).terminationGracePeriodSeconds as number, role).toBeGreaterThanOrEqual(needed);
    }
    for (const role of ['runner', 'evaluator']) expect(secondsOf(composeServices[role]!.stop_grace_period), role).toBeGreaterThanOrEqual(needed);
    // The API's grace covers a synchronous wait (HOLON_SYNC_WAIT_S, default 60 s).
    const api = ofKind('Deployment').find((x) => nameOf(x) === 'holon-api')!;
    expect(podSpec(api).terminationGracePeriodSeconds as number).toBeGreaterThanOrEqual(loadConfig({}).syncWaitS + MARGIN_S);
  });

  it('every Deployment with an HTTP port has its probes; runners scale; every role has a disruption budget', () => {
    const deployments = ofKind('Deployment');
    expect(deployments.map(nameOf).sort()).toEqual(['holon-api', 'holon-evaluator', 'holon-runner', 'holon-settler']);
    for (const d of deployments) {
      for (const c of holonContainers(d)) {
        for (const port of records(c.ports)) {
          const probes = [c.livenessProbe, ...(port.name === 'http' ? [c.readinessProbe] : [])];
          for (const probe of probes)
            expect(((probe as Doc | undefined)?.httpGet as Doc | undefined)?.port, `${nameOf(d)} ${String(port.name)}`).toBe(port.name);
        }
      }
    }
    const api = holonContainers(deployments.find((d) => nameOf(d) === 'holon-api')!)[0]!;
    expect(records(api.ports).map((p) => p.name)).toEqual(['http']);
    const hpa = ofKind('HorizontalPodAutoscaler');
    expect(hpa.map((h) => ((h.spec as Doc).scaleTargetRef as Doc).name)).toEqual(['holon-runner']);
    const budgets = ofKind('PodDisruptionBudget').map((p) => (((p.spec as Doc).selector as Doc).matchLabels as Doc)['app.kubernetes.io/name']);
    expect(budgets.sort()).toEqual(deployments.map(nameOf).sort());
    // Compose: two API replicas behind the proxy, with the image's /healthz check; the proxy routes /mcp by key.
    expect((composeServices.api!.deploy as Doc).replicas).toBe(2);
    expect(composeServices.api!.healthcheck).toBeUndefined();
    const nginx = read('infra/nginx.conf');
    expect(nginx).toMatch(/upstream holon_mcp \{[^}]*hash \$http_authorization consistent;/);
    expect(nginx).toMatch(/location \/mcp \{[^}]*proxy_pass http:\/\/holon_mcp;/);
    expect(nginx).toContain('proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;');
    const mcpIngress = ofKind('Ingress').find((i) => nameOf(i) === 'holon-mcp')!;
    expect((mcpIngress.metadata as Doc).annotations).toMatchObject({ 'nginx.ingress.kubernetes.io/upstream-hash-by': '$http_authorization' });
  });
});

describe('infra/entrypoint.sh', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'holon-entrypoint-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const events = path.join(dir, 'events.log');
  // Stand-ins for the gateway and the agent host: they log what happens to them.
  const fake = (who: string, onTerm: string) => `
import { appendFileSync } from 'node:fs';
const log = (m) => appendFileSync(${JSON.stringify(events)}, '${who} ' + m + '\\n');
log('start ' + process.argv.slice(2).join(' '));
setInterval(() => {}, 1000);
process.on('SIGTERM', () => { log('term'); ${onTerm} });
if (process.env.DIE === '${who}') setTimeout(() => { log('dies'); process.exit(3); }, 200);
`;
  mkdirSync(path.join(dir, 'bin'));
  mkdirSync(path.join(dir, 'agents'));
  mkdirSync(path.join(dir, 'infra'));
  writeFileSync(path.join(dir, 'bin/holon.mjs'), fake('gateway', "setTimeout(() => { log('exit'); process.exit(0); }, 300);"));
  writeFileSync(path.join(dir, 'agents/host.mjs'), fake('agents', "log('exit'); process.exit(0);"));
  copyFileSync(path.join(INFRA, 'entrypoint.sh'), path.join(dir, 'infra/entrypoint.sh'));

  async function run(args: string[], env: Record<string, string>, signalWhen?: (log: string) => boolean): Promise<{ code: number | null; log: string[] }> {
    writeFileSync(events, '');
    const child = spawn('bash', [path.join(dir, 'infra/entrypoint.sh'), ...args], { env: { PATH: process.env.PATH!, ...env }, stdio: 'ignore' });
    const done = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    if (signalWhen) {
      // Up to 10 s for the moment to signal; SIGTERM then in any case (the log says what happened).
      await poll(() => signalWhen(readFileSync(events, 'utf8')), { what: 'the moment to signal', timeoutMs: 10_000, intervalMs: 25, orUndefined: true });
      child.kill('SIGTERM');
    }
    const code = await done;
    return { code, log: readFileSync(events, 'utf8').trim().split('\n') };
  }

  it('runs the agent host beside a runner, and on SIGTERM stops it only after the gateway has exited', async () => {
    const started = (l: string) => l.includes('gateway start') && l.includes('agents start');
    const { code, log } = await run(['runner'], { NODE_ENV: 'production' }, started);
    expect(code).toBe(0);
    expect(log.slice(2)).toEqual(['gateway term', 'gateway exit', 'agents term', 'agents exit']);
    expect(log.slice(0, 2).sort()).toEqual(['agents start --host 127.0.0.1 --port 7474', 'gateway start runner']);
  });

  it('runs the api alone, and not the agent host when HOLON_AGENT_HOST=0 or outside production', async () => {
    const once = (l: string) => l.includes('gateway start');
    expect((await run(['api', '--port', '0'], { NODE_ENV: 'production' }, once)).log).toEqual(['gateway start api --port 0', 'gateway term', 'gateway exit']);
    expect((await run(['evaluator'], { NODE_ENV: 'production', HOLON_AGENT_HOST: '0' }, once)).log[0]).toBe('gateway start evaluator');
    expect((await run(['serve'], {}, once)).log).not.toContain('agents start --host 127.0.0.1 --port 7474');
  });

  it('ends the container, non-zero, when either process dies', async () => {
    const agentsDie = await run(['runner'], { NODE_ENV: 'production', DIE: 'agents' });
    expect(agentsDie.code).toBe(1);
    expect(agentsDie.log.slice(-3)).toEqual(['agents dies', 'gateway term', 'gateway exit']);
    const gatewayDies = await run(['evaluator'], { NODE_ENV: 'production', DIE: 'gateway' });
    expect(gatewayDies.code).toBe(3);
    expect(gatewayDies.log.slice(-2)).toEqual(['agents term', 'agents exit']);
  });
});
