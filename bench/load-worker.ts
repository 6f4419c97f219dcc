/**
 * Worker-thread side of the gateway bench: hosts the no-op webhook agent and the load generator, so neither
 * runs on the gateway's event loop (a real client and a real agent are other processes). Requests arrive as
 * `{id, op, args}` and are answered `{id, result}` or `{id, error}`.
 */
import { parentPort } from 'node:worker_threads';
import { runLoad, runSequential, startNoopAgent, threadCpuMs, type LatencySpec, type LoadSpec, type NoopAgent } from './load.js';

let agent: NoopAgent | undefined;

type Op =
  | { op: 'startAgent' }
  | { op: 'agentServed' }
  | { op: 'stopAgent' }
  | { op: 'cpu' }
  | { op: 'load'; args: LoadSpec }
  | { op: 'sequential'; args: LatencySpec };

async function handle(msg: Op): Promise<unknown> {
  switch (msg.op) {
    case 'startAgent':
      agent ??= await startNoopAgent();
      return { port: agent.port };
    case 'agentServed':
      return agent?.served() ?? 0;
    case 'cpu':
      return threadCpuMs();
    case 'stopAgent':
      await agent?.close();
      agent = undefined;
      return null;
    case 'load':
      return runLoad(msg.args);
    case 'sequential':
      return runSequential(msg.args);
  }
}

parentPort!.on('message', (msg: Op & { id: number }) => {
  handle(msg).then(
    (result) => parentPort!.postMessage({ id: msg.id, result }),
    (err: unknown) => parentPort!.postMessage({ id: msg.id, error: err instanceof Error ? err.message : String(err) }),
  );
});
