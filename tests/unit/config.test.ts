import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { ConfigError, devMandatesDir, loadConfig } from '../../shared/platform/config.js';

const ROOT = path.resolve(__dirname, '../..');
const SECRET = 'e6QWQhaIuBY2Zi8BD4Vk0JG2RDft5VNn';
const ADMIN = 'vUAyf3hE6AM2Wxu5xzrec3fPwzk10S2zshHTL98J';

const PRODUCTION: NodeJS.ProcessEnv = {
  NODE_ENV: 'production',
  DATABASE_URL: 'postgres://holon@db.internal:5432/holon',
  HOLON_PUBLIC_URL: 'https://api.holon.example',
  HOLON_FILE_SECRET: SECRET,
  HOLON_ADMIN_KEY: ADMIN,
  HOLON_TRUST_PROXY: '1',
  HOLON_SITE_URL: 'https://holon.example/',
  HOLON_HOSTED: '1',
  HOLON_PRIVATE_EVALS: '/srv/holon/private-evals',
  HOLON_SIGNING_KEY: '{"kty":"OKP","crv":"Ed25519","d":"…","x":"…"}',
};

const REQUIRED = [
  'DATABASE_URL',
  'HOLON_PUBLIC_URL',
  'HOLON_FILE_SECRET',
  'HOLON_ADMIN_KEY',
  'HOLON_TRUST_PROXY',
  'HOLON_SITE_URL',
  'HOLON_HOSTED',
  'HOLON_PRIVATE_EVALS',
  'HOLON_SIGNING_KEY',
];

/** The problems a ConfigError lists, one per line. */
function problemsOf(env: NodeJS.ProcessEnv): string[] {
  try {
    loadConfig(env);
  } catch (e) {
    expect(e).toBeInstanceOf(ConfigError);
    return (e as Error).message.split('\n').filter((l) => l.startsWith('- '));
  }
  return [];
}

describe('production configuration', () => {
  it('a full production environment loads', () => {
    const c = loadConfig(PRODUCTION);
    expect(c).toMatchObject({
      production: true,
      publicUrl: 'https://api.holon.example',
      siteUrl: 'https://holon.example',
      fileSecret: SECRET,
      adminKey: ADMIN,
      trustProxy: true,
      allowPrivateEndpoints: false,
      rateLimits: { perAddressPerMin: 600, perAccountPerMin: 1200, signupsPerHour: 10, publishesPerHour: 30, draftsPerHour: 60, evaluationsPerHour: 10 },
    });
    expect(loadConfig({ ...PRODUCTION, HOLON_TRUST_PROXY: '0' }).trustProxy).toBe(false);
  });

  it('with nothing set, lists all nine problems in one error, each naming its variable', () => {
    const problems = problemsOf({ NODE_ENV: 'production' });
    expect(problems).toHaveLength(REQUIRED.length);
    for (const name of REQUIRED)
      expect(
        problems.filter((p) => p.includes(name)),
        name,
      ).toHaveLength(1);
  });

  it.each(REQUIRED)('names %s when it alone is missing', (name) => {
    const env = { ...PRODUCTION, [name]: undefined };
    const problems = problemsOf(env);
    expect(problems).toHaveLength(1);
    expect(problems[0]).toContain(name);
    // blank counts as missing
    expect(problemsOf({ ...PRODUCTION, [name]: '  ' })).toEqual(problems);
  });

  it('production without hosted mode refuses to start, saying what to set; --hosted (the override) is hosted mode too', () => {
    const problems = problemsOf({ ...PRODUCTION, HOLON_HOSTED: undefined });
    expect(problems).toEqual([expect.stringMatching(/^- production needs HOLON_HOSTED=1 .*dev mode, where nothing asks for a key/)]);
    expect(problemsOf({ ...PRODUCTION, HOLON_HOSTED: '0' })).toEqual(problems);
    expect(loadConfig({ ...PRODUCTION, HOLON_HOSTED: undefined }, { hosted: true })).toMatchObject({ production: true, hosted: true });
  });

  it('production needs the private holdout cases (HOLON_PRIVATE_EVALS), as the spec lists them', () => {
    const problems = problemsOf({ ...PRODUCTION, HOLON_PRIVATE_EVALS: undefined });
    expect(problems).toEqual([expect.stringMatching(/^- production needs HOLON_PRIVATE_EVALS /)]);
    expect(loadConfig(PRODUCTION).privateEvalsDir).toBe('/srv/holon/private-evals');
  });

  it('refuses short secrets without printing them', () => {
    const problems = problemsOf({ ...PRODUCTION, HOLON_FILE_SECRET: 'short-file-secret', HOLON_ADMIN_KEY: 'short-admin-key' });
    expect(problems).toHaveLength(2);
    expect(problems.find((p) => p.includes('HOLON_FILE_SECRET'))).toMatch(/at least 32/);
    expect(problems.find((p) => p.includes('HOLON_ADMIN_KEY'))).toMatch(/at least 32/);
    expect(problems.join('\n')).not.toMatch(/short-file-secret|short-admin-key/);
    expect(problemsOf({ ...PRODUCTION, HOLON_FILE_SECRET: 'x'.repeat(31) })).toHaveLength(1);
    expect(problemsOf({ ...PRODUCTION, HOLON_FILE_SECRET: 'Q7mZ2pX9kLw4Rt8Vn3Bj6Hc1Yf5Gd0Se' })).toEqual([]);
  });

  it('refuses secrets that do not look random, one value for two secrets, and a public URL that is not an origin', () => {
    const weak = problemsOf({ ...PRODUCTION, HOLON_ADMIN_KEY: 'a'.repeat(32), HOLON_FILE_SECRET: 'abcdefgh'.repeat(4) });
    expect(weak).toEqual([
      expect.stringMatching(
        /^- HOLON_ADMIN_KEY does not look random \(it has only 1 distinct characters\): set it to a value of its own from `openssl rand -base64 32`$/,
      ),
      expect.stringMatching(/^- HOLON_FILE_SECRET does not look random \(it repeats a pattern of 8 characters\)/),
    ]);
    expect(weak.join('\n')).not.toContain('aaaa');
    const same = problemsOf({ ...PRODUCTION, HOLON_FILE_SECRET: ADMIN });
    expect(same).toEqual([expect.stringMatching(/^- HOLON_FILE_SECRET is the same value as HOLON_ADMIN_KEY: each secret needs its own value/)]);
    expect(same.join('\n')).not.toContain(ADMIN);
    const webhook = `whsec_${Buffer.from(SECRET).toString('base64')}`;
    expect(problemsOf({ ...PRODUCTION, HOLON_CALLBACK_SECRET: webhook })).toEqual([]);
    expect(problemsOf({ ...PRODUCTION, HOLON_SIGNING_KEY: ADMIN })).toEqual([
      expect.stringMatching(/^- HOLON_SIGNING_KEY is the same value as HOLON_ADMIN_KEY/),
    ]);
    expect(problemsOf({ ...PRODUCTION, HOLON_CALLBACK_SECRET: `whsec_${ADMIN}` })).toEqual([
      expect.stringMatching(/^- HOLON_CALLBACK_SECRET is the same value as HOLON_ADMIN_KEY/),
    ]);
    for (const url of ['https://host/x?y', 'https://host/x', 'https://host?y', 'https://host#f']) {
      expect(problemsOf({ ...PRODUCTION, HOLON_PUBLIC_URL: url }), url).toEqual([
        '- HOLON_PUBLIC_URL must be an origin only (https://host or https://host:port), without a path, query or fragment: set it to https://host',
      ]);
    }
    expect(problemsOf({ ...PRODUCTION, HOLON_PUBLIC_URL: 'https://host:8443/' })).toEqual([]);
    // Outside production a weak secret still starts (the dev gateway and the tests use fixed ones).
    expect(loadConfig({ HOLON_ADMIN_KEY: 'a'.repeat(32), HOLON_FILE_SECRET: 'a'.repeat(32) }).adminKey).toBe('a'.repeat(32));
  });

  it('outside production, nothing is required but a weak admin key is still refused', () => {
    const dev = loadConfig({});
    expect(dev).toMatchObject({ production: false, trustProxy: false, allowPrivateEndpoints: false });
    expect(dev.publicUrl).toBeUndefined();
    expect(dev.adminKey).toBeUndefined();
    const problems = problemsOf({ HOLON_ADMIN_KEY: 'admin' });
    expect(problems).toHaveLength(1);
    expect(problems[0]).toContain('HOLON_ADMIN_KEY');
    expect(loadConfig({ HOLON_ADMIN_KEY: ADMIN }).adminKey).toBe(ADMIN);
    expect(loadConfig({ HOLON_FILE_SECRET: 'dev' }).fileSecret).toBe('dev');
    // The registry lists holon-labs/sec-company from the config's contact, never from the process environment itself.
    expect(loadConfig({ HOLON_SEC_CONTACT: ' ops@holon.example ' }).secContact).toBe('ops@holon.example');
    expect(loadConfig({}).secContact).toBeUndefined();
  });

  it('refuses HOLON_ALLOW_PRIVATE_ENDPOINTS=1 in production and accepts it in dev', () => {
    const problems = problemsOf({ ...PRODUCTION, HOLON_ALLOW_PRIVATE_ENDPOINTS: '1' });
    expect(problems).toHaveLength(1);
    expect(problems[0]).toContain('HOLON_ALLOW_PRIVATE_ENDPOINTS');
    expect(loadConfig({ ...PRODUCTION, HOLON_ALLOW_PRIVATE_ENDPOINTS: '0' }).allowPrivateEndpoints).toBe(false);
    expect(loadConfig({ HOLON_ALLOW_PRIVATE_ENDPOINTS: '1' }).allowPrivateEndpoints).toBe(true);
    expect(problemsOf({ HOLON_ALLOW_PRIVATE_ENDPOINTS: 'yes' })[0]).toContain('HOLON_ALLOW_PRIVATE_ENDPOINTS');
  });

  it('parses HOLON_TRUST_PROXY as 1 or 0 only', () => {
    expect(loadConfig({ HOLON_TRUST_PROXY: '1' }).trustProxy).toBe(true);
    expect(loadConfig({ HOLON_TRUST_PROXY: ' 1 ' }).trustProxy).toBe(true);
    expect(loadConfig({ HOLON_TRUST_PROXY: '0' }).trustProxy).toBe(false);
    expect(loadConfig({}).trustProxy).toBe(false);
    for (const bad of ['true', 'yes', '2', 'on']) {
      const problems = problemsOf({ HOLON_TRUST_PROXY: bad });
      expect(problems, bad).toHaveLength(1);
      expect(problems[0]).toContain('HOLON_TRUST_PROXY');
    }
    // in production a malformed value is reported once, as malformed
    const problems = problemsOf({ ...PRODUCTION, HOLON_TRUST_PROXY: 'true' });
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(/HOLON_TRUST_PROXY must be 1/);
  });

  it('checks the public URLs: absolute, and https in production', () => {
    expect(loadConfig({ HOLON_PUBLIC_URL: 'http://localhost:8080/' }).publicUrl).toBe('http://localhost:8080');
    expect(problemsOf({ HOLON_PUBLIC_URL: 'api.holon.example' })[0]).toContain('HOLON_PUBLIC_URL');
    expect(problemsOf({ HOLON_SITE_URL: 'ftp://holon.example' })[0]).toContain('HOLON_SITE_URL');
    const problems = problemsOf({ ...PRODUCTION, HOLON_PUBLIC_URL: 'http://api.holon.example', HOLON_SITE_URL: '/relative' });
    expect(problems).toHaveLength(2);
    expect(problems[0]).toMatch(/HOLON_PUBLIC_URL must be an https URL/);
    expect(problems[1]).toMatch(/HOLON_SITE_URL must be an absolute URL/);
  });

  it('reads the rate limits, with defaults', () => {
    expect(loadConfig({}).rateLimits).toEqual({
      perAddressPerMin: 600,
      perAccountPerMin: 1200,
      signupsPerHour: 10,
      publishesPerHour: 30,
      draftsPerHour: 60,
      evaluationsPerHour: 10,
    });
    expect(
      loadConfig({
        HOLON_RATE_ADDRESS_PER_MIN: '60',
        HOLON_RATE_ACCOUNT_PER_MIN: '120',
        HOLON_RATE_SIGNUPS_PER_HOUR: '3',
        HOLON_RATE_PUBLISHES_PER_HOUR: '4',
        HOLON_RATE_DRAFTS_PER_HOUR: '5',
      }).rateLimits,
    ).toEqual({ perAddressPerMin: 60, perAccountPerMin: 120, signupsPerHour: 3, publishesPerHour: 4, draftsPerHour: 5, evaluationsPerHour: 10 });
    const problems = problemsOf({ HOLON_RATE_ADDRESS_PER_MIN: '0', HOLON_RATE_SIGNUPS_PER_HOUR: 'ten', HOLON_RATE_DRAFTS_PER_HOUR: '-1' });
    expect(problems).toHaveLength(3);
    expect(problems[0]).toContain('HOLON_RATE_ADDRESS_PER_MIN');
    expect(problems[1]).toContain('HOLON_RATE_SIGNUPS_PER_HOUR');
    expect(problems[2]).toContain('HOLON_RATE_DRAFTS_PER_HOUR');
  });
});

describe('holon serve in production', () => {
  it('exits non-zero, printing every missing variable, when the environment is empty', async () => {
    const run = promisify(execFile);
    const result = await run(process.execPath, [path.join(ROOT, 'bin/holon.mjs'), 'serve'], {
      cwd: ROOT,
      env: { PATH: process.env.PATH, NODE_ENV: 'production' },
      timeout: 30_000,
    }).then(
      (r) => ({ code: 0, ...r }),
      (e: { code: number; stdout: string; stderr: string }) => e,
    );
    expect(result.code).not.toBe(0);
    expect(typeof result.code).toBe('number');
    for (const name of REQUIRED) expect(result.stderr).toContain(name);
  });
});

describe("the dev gateway's defaults", () => {
  it('holon serve loads examples/mandates in dev; HOLON_MANDATES (even empty), hosted mode and production decide otherwise', () => {
    expect(devMandatesDir({})).toBe('examples/mandates');
    expect(devMandatesDir({ HOLON_MANDATES: 'elsewhere' })).toBeUndefined(); // loadConfig reads it
    expect(devMandatesDir({ HOLON_MANDATES: '' })).toBeUndefined();
    expect(loadConfig({ HOLON_MANDATES: '' }).mandatesDir).toBeUndefined();
    expect(devMandatesDir({ HOLON_HOSTED: '1' })).toBeUndefined();
    expect(devMandatesDir({}, true)).toBeUndefined();
    expect(devMandatesDir({ NODE_ENV: 'production' })).toBeUndefined();
  });

  it('HOLON_AGENT_HOST_PORT: 7474 unless set, a port number', () => {
    expect(loadConfig({}).agentHostPort).toBe(7474);
    expect(loadConfig({ HOLON_AGENT_HOST_PORT: '17474' }).agentHostPort).toBe(17474);
    expect(problemsOf({ HOLON_AGENT_HOST_PORT: '0' })).toEqual(['- HOLON_AGENT_HOST_PORT must be an integer from 1 to 65535, not "0"']);
  });
});
