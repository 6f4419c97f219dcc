/**
 * What production (NODE_ENV=production) refuses to start without or with (gateway.md §7 "Operating"), from the
 * declarations' `production` rules and their secrets. Only settings that protect money, keys or users carry a rule:
 * one that merely turns a feature off (GitHub sign-in, …) must never stop the gateway.
 */
import { MIN_SECRET_LENGTH, secretWeakness } from '../../core/secret-strength.js';
import { type Config, SETTINGS } from './index.js';
import { nonEmpty } from './text.js';
import { leaves } from './walk.js';

export function productionProblems(config: Config, env: NodeJS.ProcessEnv, overrides: Partial<Config>): string[] {
  if (!config.production) return [];
  const out: string[] = [];
  for (const { declared, value, override } of leaves(SETTINGS, config, overrides)) {
    const rule = declared.production;
    if (!rule) continue;
    // Set but invalid values are already reported where they are read; only the missing ones are added here.
    if (rule.needs && override === undefined && nonEmpty(env[declared.env]) === undefined) out.push(`production needs ${declared.env} ${rule.needs}`);
    const problem = rule.check?.(value, { raw: env[declared.env], exclude: config.exclude });
    if (problem) out.push(problem);
  }
  return [...out, ...secretProblems(env)];
}

const GENERATE = 'set it to a value of its own from `openssl rand -base64 32`';

/**
 * The secrets production checks (docs/operating.md, "Secrets"): each generated one must look generated
 * (shared/core/secret-strength.ts), and no value may serve two of them. The others (the signing key, a JWK or PEM
 * checked as a key where it is loaded; GitHub's client secret, which GitHub makes) are only compared. A webhook
 * secret is judged by its random part (after `whsec_`). No value is ever repeated in a problem.
 */
function secretProblems(env: NodeJS.ProcessEnv): string[] {
  const out: string[] = [];
  const set = leaves(SETTINGS, undefined, undefined).flatMap(({ declared }) => {
    const value = nonEmpty(env[declared.env]);
    if (!declared.secret || value === undefined) return [];
    return [{ name: declared.env, generated: declared.secret.generated, value, random: value.startsWith('whsec_') ? value.slice('whsec_'.length) : value }];
  });
  for (const s of set) {
    // Too short is reported where the setting is read (its own sentence); the rest of what makes a secret weak, here.
    const weak = s.generated && [...s.random].length >= MIN_SECRET_LENGTH ? secretWeakness(s.random) : null;
    if (weak) out.push(`${s.name} does not look random (${weak}): ${GENERATE}`);
  }
  set.forEach((a, i) => {
    for (const b of set.slice(i + 1)) {
      if (a.value === b.value || a.random === b.random) out.push(`${b.name} is the same value as ${a.name}: each secret needs its own value; ${GENERATE}`);
    }
  });
  return out;
}
