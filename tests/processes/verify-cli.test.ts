/**
 * `holon verify` (services/cli/verify.ts) on what a gateway serves, offline with saved files: a receipt tree and its
 * proof verify (exit 0); a tampered copy, a proof of another receipt, a changed checkpoint are refused (exit 1,
 * naming the check); misuse is exit 2. Signed mandates: a delegation chain — the root mandate and the sub-mandate a
 * pipeline ran under — verifies link by link, checked by the independent verifier too (signatures, the parent hash);
 * a widened or reordered chain does not. `holon keys rotate` on a dev gateway's key file: the next start signs with
 * the new key, the key set keeps the old one with `retired_at`, and what it signed still verifies.
 */
import { createHash } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import reference from 'canonicalize';
import { describe, expect, test } from 'vitest';
import { ALL_ROLES, startGateway } from '../../services/compose.js';
import { holonCli } from '../support/backup-checks.js';
import { TEST_REGISTRY } from '../support/gateway.js';
import { gatewayTest } from '../support/gateway-fixture.js';
import { MANDATE_TYP, verifyDetachedJws, type KeySet } from '../support/independent-verifier.js';
import { inDir } from '../support/temp-files.js';
import type { Schema, Answer } from '../support/http.js';

/** A mandate view as a gateway that signs answers it: its statement and signature are there. */
type SignedMandateView = Schema<'MandateView'> & { statement: NonNullable<Schema<'MandateView'>['statement']>; signature: string };

const canonicalize = reference as unknown as (value: unknown) => string;

function plusMicro(amount: string): string {
  const [whole, frac = ''] = amount.split('.');
  const next = BigInt(whole!) * 1_000_000n + BigInt(frac.padEnd(6, '0')) + 1n;
  return `${next / 1_000_000n}.${String(next % 1_000_000n).padStart(6, '0')}`;
}

describe('holon verify', () => {
  gatewayTest('a receipt and its proof verify offline; a tampered copy does not; mandates verify as a chain', async ({ gateway: g }) => {
    await g.mandate({ allow: { agents: ['examples/*'], capabilities: ['text.*'] }, delegation: { max_depth: 1 } });
    const call = await g.post<Schema<'CallSucceeded'>>('/v0/calls', {
      mandate: 'alice/test',
      agent: 'examples/invoice-pipeline',
      input: { text: 'Invoice 7', to: 'fr' },
    });
    expect(call.status).toBe(200);
    const receipt = call.body.receipt;
    expect(receipt.children).toHaveLength(2);
    const proof = (await g.get<Answer<'readReceiptProof', 200>>(`/v0/receipts/${receipt.id}/proof`)).body;
    const otherProof = (await g.get<Answer<'readReceiptProof', 200>>(`/v0/receipts/${receipt.children[0]!.id}/proof`)).body;
    const jwks = (await (await fetch(`${g.url}/.well-known/jwks.json`)).json()) as KeySet;

    await inDir(async (file) => {
      const [r, p, k] = [await file('receipt.json', receipt), await file('proof.json', proof), await file('jwks.json', jwks)];
      const ok = await holonCli(['verify', r, '--proof', p, '--jwks', k]);
      expect(ok.code, ok.stdout + ok.stderr).toBe(0);
      expect(ok.stdout).toMatch(/✓ signature of r_\w+: signed by key /);
      expect(ok.stdout).toMatch(/✓ inclusion: leaf \d+ of \d+\nverified\n$/);
      expect((await holonCli(['verify', r, '--url', g.url])).code).toBe(0);

      const changed = await file('changed.json', { ...receipt, cost: { ...receipt.cost, total: plusMicro(receipt.cost.total) } });
      const bad = await holonCli(['verify', changed, '--proof', p, '--jwks', k]);
      expect(bad.code).toBe(1);
      expect(bad.stdout).toMatch(/✗ signature of r_\w+: the signature does not verify/);
      expect(bad.stdout).toMatch(/✗ leaf hash: the receipt does not hash to the proof’s leaf/);
      expect(bad.stdout).toMatch(/NOT verified: signature of r_\w+ failed\n$/);

      const child = { ...receipt, children: [{ ...receipt.children[0]!, status: 'succeeded', billed: !receipt.children[0]!.billed }, receipt.children[1]] };
      expect((await holonCli(['verify', await file('child.json', child), '--jwks', k])).code).toBe(1);
      const wrongProof = await holonCli(['verify', r, '--proof', await file('other.json', otherProof), '--jwks', k]);
      expect(wrongProof.code).toBe(1);
      expect(wrongProof.stdout).toMatch(/✗ proof is of this receipt/);
      const note = proof.checkpoint.note.replace(/\n(\d+)\n/, (_m: string, n: string) => `\n${Number(n) + 1}\n`);
      const forged = await holonCli(['verify', r, '--proof', await file('forged.json', { ...proof, checkpoint: { ...proof.checkpoint, note } }), '--jwks', k]);
      expect(forged.code).toBe(1);
      expect(forged.stdout).toMatch(/✗ checkpoint signature/);

      expect((await holonCli(['verify', r])).code).toBe(2);
      expect((await holonCli(['verify', path.join(path.dirname(r), 'missing.json'), '--jwks', k])).code).toBe(2);
      expect((await holonCli(['verify', r, '--jwks', k, '--nope'])).code).toBe(2);
      expect((await holonCli(['verify', k, '--jwks', k])).code).toBe(2);

      // The delegation chain: the root mandate, then the sub-mandate the pipeline's children ran under.
      const root = (await g.get<SignedMandateView>('/v0/mandates/alice/test')).body;
      const sub = (await g.get<SignedMandateView>(`/v0/mandates/${receipt.sub_mandate}`)).body;
      expect(sub.statement.parent).toEqual({ id: 'alice/test', sha256: createHash('sha256').update(canonicalize(root.statement)).digest('base64url') });
      for (const view of [root, sub]) {
        expect(await verifyDetachedJws(view.signature, Buffer.from(canonicalize(view.statement)), jwks, MANDATE_TYP)).toMatchObject({ ok: true });
      }
      const chain = await holonCli(['verify', await file('chain.json', [root, sub]), '--jwks', k]);
      expect(chain.code, chain.stdout).toBe(0);
      expect(chain.stdout).toMatch(/✓ parent of .*: chained to alice\/test/);
      expect(chain.stdout).toMatch(/✓ attenuation of .*: within its parent/);
      expect((await holonCli(['verify', await file('one.json', root), '--jwks', k])).code).toBe(0);
      const widened = {
        ...sub,
        statement: { ...sub.statement, mandate: { ...sub.statement.mandate, budget: { ...sub.statement.mandate.budget, total: '999.00' } } },
      };
      const w = await holonCli(['verify', await file('widened.json', [root, widened]), '--jwks', k]);
      expect(w.code).toBe(1);
      expect(w.stdout).toMatch(/✗ signature of /);
      expect((await holonCli(['verify', await file('reversed.json', [sub, root]), '--jwks', k])).code).toBe(1);
    });
  });
});

describe('holon keys rotate', () => {
  test('a dev gateway’s key file: the next start signs with the new key, the old one stays in the key set, retired', async () => {
    const saved = { DATABASE_URL: process.env.DATABASE_URL, REDIS_URL: process.env.REDIS_URL };
    delete process.env.DATABASE_URL;
    delete process.env.REDIS_URL;
    const dir = await mkdtemp(path.join(tmpdir(), 'holon-rotate-'));
    const options = { port: 0, dbDir: path.join(dir, 'db'), registryDirs: TEST_REGISTRY, registryExplicit: true, agentHost: false, logLevel: 'warn' };
    const env = { DATABASE_URL: undefined, REDIS_URL: undefined, HOLON_SIGNING_KEY: undefined };
    try {
      const refusedOn = async (gw: Awaited<ReturnType<typeof startGateway>>) => {
        const url = `http://127.0.0.1:${gw.port}`;
        const res = await fetch(`${url}/v0/calls`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ mandate: 'nobody/none', agent: 'examples/echo-upper', input: {} }),
        });
        const receipt = ((await res.json()) as { receipt: { signature: string } }).receipt;
        const jwks = (await (await fetch(`${url}/.well-known/jwks.json`)).json()) as KeySet;
        return { receipt, jwks, kid: JSON.parse(Buffer.from(receipt.signature.split('.')[0]!, 'base64url').toString()).kid as string };
      };
      const first = await startGateway(ALL_ROLES, options);
      const before = await refusedOn(first).finally(() => first.stop());
      expect(before.jwks.keys[0]!.kid).toBe(before.kid);

      const rotated = await holonCli(['keys', 'rotate', '--db', options.dbDir, '--json'], env);
      expect(rotated.code, rotated.stderr).toBe(0);
      const said = JSON.parse(rotated.stdout) as { kid: string; retired: string; retired_at: string };
      expect(said.retired).toBe(before.kid);

      const second = await startGateway(ALL_ROLES, options);
      const after = await refusedOn(second).finally(() => second.stop());
      expect(after.kid).toBe(said.kid);
      expect(after.jwks.keys[0]!.kid).toBe(said.kid);
      expect(after.jwks.keys.find((k) => k.kid === before.kid)).toMatchObject({ retired_at: said.retired_at });
      await inDir(async (file) => {
        const k = await file('jwks.json', after.jwks);
        expect((await holonCli(['verify', await file('old.json', before.receipt), '--jwks', k])).code).toBe(0);
        expect((await holonCli(['verify', await file('new.json', after.receipt), '--jwks', k])).code).toBe(0);
      });
      // On Postgres without HOLON_SIGNING_KEY there is no one key to rotate: misuse.
      expect((await holonCli(['keys', 'rotate'], { DATABASE_URL: 'postgres://127.0.0.1:1/none', HOLON_SIGNING_KEY: undefined })).code).toBe(2);
      expect((await holonCli(['keys', 'spin'], env)).code).toBe(2);
    } finally {
      Object.assign(process.env, Object.fromEntries(Object.entries(saved).filter(([, v]) => v !== undefined)));
      await rm(dir, { recursive: true, force: true });
    }
  });

  test('with HOLON_SIGNING_KEY: the new settings, the old key retiring at --at after those already retired', async () => {
    const { generateKeyPairSync } = await import('node:crypto');
    const current = generateKeyPairSync('ed25519').privateKey.export({ format: 'jwk' });
    const older = generateKeyPairSync('ed25519').publicKey.export({ format: 'jwk' });
    const env = {
      HOLON_SIGNING_KEY: JSON.stringify(current),
      HOLON_RETIRED_KEYS: JSON.stringify([{ kty: 'OKP', crv: 'Ed25519', x: older.x, retired_at: '2026-01-01T00:00:00Z' }]),
      DATABASE_URL: undefined,
    };
    const r = await holonCli(['keys', 'rotate', '--at', '2026-06-01T12:00:00Z', '--json'], env);
    expect(r.code, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout) as { HOLON_SIGNING_KEY: string; HOLON_RETIRED_KEYS: string; retired_at: string };
    const next = JSON.parse(out.HOLON_SIGNING_KEY) as { d: string; x: string };
    expect(next.d).toBeTruthy();
    expect(next.x).not.toBe(current.x);
    expect(JSON.parse(out.HOLON_RETIRED_KEYS)).toEqual([
      { kty: 'OKP', crv: 'Ed25519', x: older.x, retired_at: '2026-01-01T00:00:00.000Z' },
      { kty: 'OKP', crv: 'Ed25519', x: current.x, retired_at: '2026-06-01T12:00:00.000Z' },
    ]);
    expect((await holonCli(['keys', 'rotate', '--at', 'soon'], env)).code).toBe(2);
  });
});
