/**
 * The outside world of the gateway bench: a no-op webhook agent (node:http, answers `{"ok":true}` to POST)
 * and an HTTP load generator (undici `request` over a keep-alive Agent). Used from a worker thread
 * (bench/load-worker.ts) so that the client and the agent do not share the gateway's event loop, or inline.
 */
import { readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import { Agent, request } from 'undici';

export interface NoopAgent {
  port: number;
  /** POSTs answered so far. */
  served(): number;
  close(): Promise<void>;
}

const OK = Buffer.from('{"ok":true}');

export async function startNoopAgent(): Promise<NoopAgent> {
  let served = 0;
  const server = http.createServer((req, res) => {
    if (req.method !== 'POST') {
      res.writeHead(405).end();
      return;
    }
    req.on('data', () => undefined);
    req.on('end', () => {
      served++;
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': OK.length });
      res.end(OK);
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  return {
    port: (server.address() as AddressInfo).port,
    served: () => served,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export interface LoadSpec {
  /** Where to POST; with several (API processes), client i always sends to urls[i % n]. */
  url: string | string[];
  /** JSON body, already encoded; with several, client i always sends bodies[i % n]. */
  body: string | string[];
  concurrency: number;
  /** Requests sent and not counted first (connections opened, JIT warm). */
  warmupMs: number;
  durationMs: number;
  /** Hard bound on requests (the loop also stops at the deadline). */
  maxRequests?: number;
  /** Extra request headers (next to content-type: application/json). */
  headers?: Record<string, string>;
}

export interface LoadResult {
  /** Requests completed inside the measured window, by HTTP status (or error code). */
  byStatus: Record<string, number>;
  ok: number;
  elapsedMs: number;
  /** Latencies (ms) of the 200s in the measured window. */
  latencies: number[];
  /** A sample of non-200 answers, for the report. */
  sampleErrors: string[];
}

export function keepAliveAgent(connections: number): Agent {
  return new Agent({ connections, pipelining: 1, keepAliveTimeout: 60_000, keepAliveMaxTimeout: 600_000 });
}

const HEADERS = { 'content-type': 'application/json' };

/** `concurrency` closed loops of POSTs; counts only what finishes inside [warmup, warmup + duration]. */
export async function runLoad(spec: LoadSpec): Promise<LoadResult> {
  const dispatcher = keepAliveAgent(spec.concurrency);
  const byStatus: Record<string, number> = {};
  const latencies: number[] = [];
  const sampleErrors: string[] = [];
  const t0 = performance.now();
  const measureFrom = t0 + spec.warmupMs;
  const stopAt = measureFrom + spec.durationMs;
  let sent = 0;
  const max = spec.maxRequests ?? Number.POSITIVE_INFINITY;
  const bodies = Array.isArray(spec.body) ? spec.body : [spec.body];
  const urls = Array.isArray(spec.url) ? spec.url : [spec.url];
  const headers = { ...HEADERS, ...spec.headers };
  const loop = async (_: unknown, client: number): Promise<void> => {
    const body = bodies[client % bodies.length]!;
    const url = urls[client % urls.length]!;
    while (performance.now() < stopAt && sent < max) {
      sent++;
      const start = performance.now();
      let status: string;
      let text = '';
      try {
        const res = await request(url, { method: 'POST', headers, body, dispatcher });
        status = String(res.statusCode);
        text = await res.body.text();
      } catch (err) {
        status = (err as { code?: string }).code ?? (err as Error).name;
        text = (err as Error).message;
      }
      const end = performance.now();
      if (start < measureFrom || end > stopAt) continue;
      byStatus[status] = (byStatus[status] ?? 0) + 1;
      if (status === '200') latencies.push(end - start);
      else if (sampleErrors.length < 5) sampleErrors.push(`${status}: ${text.slice(0, 300)}`);
    }
  };
  await Promise.all(Array.from({ length: spec.concurrency }, loop));
  await dispatcher.close();
  const ok = byStatus['200'] ?? 0;
  return { byStatus, ok, elapsedMs: spec.durationMs, latencies, sampleErrors };
}

export interface LatencySpec {
  url: string;
  body: string;
  /** Requests sent first and not counted. */
  warmup: number;
  samples: number;
  /** Extra request headers (next to content-type: application/json). */
  headers?: Record<string, string>;
}

/** One request at a time; the latency (ms) of each counted request, and statuses other than 200. */
export async function runSequential(spec: LatencySpec): Promise<{ latencies: number[]; errors: Record<string, number> }> {
  const dispatcher = keepAliveAgent(1);
  const latencies: number[] = [];
  const errors: Record<string, number> = {};
  const headers = { ...HEADERS, ...spec.headers };
  for (let i = 0; i < spec.warmup + spec.samples; i++) {
    const start = performance.now();
    let status: string;
    try {
      const res = await request(spec.url, { method: 'POST', headers, body: spec.body, dispatcher });
      status = String(res.statusCode);
      await res.body.text();
    } catch (err) {
      status = (err as { code?: string }).code ?? (err as Error).name;
    }
    const ms = performance.now() - start;
    if (i < spec.warmup) continue;
    if (status === '200') latencies.push(ms);
    else errors[status] = (errors[status] ?? 0) + 1;
  }
  await dispatcher.close();
  return { latencies, errors };
}

/** CPU time (utime + stime, ms) of the calling thread, from /proc; NaN where there is no /proc. */
export function threadCpuMs(): number {
  return cpuMsOf('/proc/thread-self/stat');
}

/** CPU time (utime + stime, ms) of a process, from /proc; NaN where there is none. */
export function processCpuMs(pid: number): number {
  return cpuMsOf(`/proc/${pid}/stat`);
}

function cpuMsOf(statFile: string): number {
  try {
    const text = readFileSync(statFile, 'utf8');
    const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) * 10; // USER_HZ = 100
  } catch {
    return Number.NaN;
  }
}

/** The q-quantile (0..1) of `values`, nearest-rank. */
export function quantile(values: readonly number[], q: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return sorted[rank]!;
}
