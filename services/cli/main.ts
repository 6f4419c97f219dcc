/**
 * `holon <command>`: the one entry point of the gateway's command line.
 *
 * Each command's module is imported when that command runs, and only then: `holon validate` or `holon --help` never
 * loads the gateway (Express, the MCP SDK, OpenTelemetry, the database drivers), which `holon serve` and the roles need.
 */
const HELP = `holon — the Holon gateway

Usage:
  holon serve [--port N] [--host ADDR] [--db DIR] [--registry DIR,…] [--mandates DIR] [--hosted]
                                        run every service in one process (PGlite and an in-process
                                        queue unless DATABASE_URL / REDIS_URL are set); listens on
                                        127.0.0.1 unless --host / HOST says otherwise (hosted: 0.0.0.0);
                                        in dev, the mandates of examples/mandates unless --mandates /
                                        HOLON_MANDATES name others (docs/configuration.md)
  holon api | runner | settler | evaluator [options]
                                        run one service (needs DATABASE_URL and REDIS_URL)
  holon validate <file>… [--json]       check manifests (holon.yaml), mandates and evaluation suites (a file
                                        named suite.yaml, or with a top-level cases list; fixtures are looked
                                        for in files/ beside it); exit 1 when any is invalid, 2 on misuse
  holon publish <holon.yaml> [--url URL] [--key KEY] [--json]
                                        publish a version to a hosted gateway (HOLON_URL, HOLON_KEY: a
                                        human key); exit 1 when refused, listing every problem
  holon credential set|delete <ns/name> [--url URL] [--key KEY]
                                        set (the token on stdin, or typed unseen) or delete an agent's
                                        endpoint credential on a hosted gateway
  holon earnings [--url URL] [--key KEY] [--json]
                                        your published versions and what each earned (from the journal)
  holon payout <amount> | --list | --address 0x… [--url URL] [--key KEY] [--json]
                                        withdraw earnings in the asset's currency to your payout address,
                                        list your payouts, or set the address (docs/payments.md)
  holon migrate [--db DIR] [--json]     apply this release's migrations to DATABASE_URL (else the PGlite
                                        directory --db) and exit: for a Job, an init container or a deploy
                                        step; prints what it applied. Safe beside starting roles (they
                                        migrate too, under the same lock); exit 1 when it fails, saying why
  holon backup --out FILE [--db DIR] [--json]
                                        copy every row, the sequences and the schema version of DATABASE_URL
                                        (else the PGlite directory --db) into a JSON Lines file
  holon restore --in FILE [--db DIR] [--json]
                                        load a backup into an empty database, in one transaction; refused
                                        (exit 1, saying why) for another schema version, a non-empty target
                                        or a damaged file
  holon audit [--db DIR] [--json]       the ledger audit; exit 1 on any discrepancy (for cron jobs)
                                        (backup, restore and audit refuse a PGlite directory a running
                                        gateway holds: PGlite is one process at a time)
  holon verify <receipt.json | mandate.json> [--proof proof.json] [--jwks jwks.json | --url URL] [--json]
                                        check a receipt's signature (and its children's) and, with --proof,
                                        its place in the signed log; or a mandate chain's signatures and
                                        attenuation; offline with --jwks; exit 1 when a check fails, 2 on misuse
  holon keys rotate [--db DIR] [--at TIME] [--json]
                                        a new signing key; the old one stays in the key set, retired (with
                                        HOLON_SIGNING_KEY: prints the new settings, the old key retiring --at)
  holon help                            this text
`;

export async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  switch (command) {
    case 'validate':
      return (await import('./validate.js')).validateCommand(rest);
    case 'publish':
      return (await import('./publish.js')).publishCommand(rest);
    case 'credential':
      return (await import('./credential.js')).credentialCommand(rest);
    case 'earnings':
      return (await import('./earnings.js')).earningsCommand(rest);
    case 'payout':
      return (await import('./payout.js')).payoutCommand(rest);
    case 'migrate':
      return (await import('./migrate.js')).migrateCommand(rest);
    case 'backup':
      return (await import('./backup.js')).backupCommand(rest);
    case 'restore':
      return (await import('./restore.js')).restoreCommand(rest);
    case 'audit':
      return (await import('./audit.js')).auditCommand(rest);
    case 'verify':
      return (await import('./verify.js')).verifyCommand(rest);
    case 'keys':
      return (await import('./keys.js')).keysCommand(rest);
    case 'serve':
      return (await import('./serve.js')).serveCommand(rest);
    case 'api':
    case 'runner':
    case 'settler':
    case 'evaluator':
      return (await import('./serve.js')).serveCommand(rest, [command]);
    case undefined:
    case 'help':
    case '--help':
    case '-h':
      process.stdout.write(HELP);
      return command === undefined ? 2 : 0;
    default:
      process.stderr.write(`holon: unknown command "${command}"\n\n${HELP}`);
      return 2;
  }
}
