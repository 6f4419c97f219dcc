/**
 * Summarises a V8 .cpuprofile (from `node --cpu-prof`) by where the self time went: npm package, project
 * directory, Node internals, GC, idle. A scratch tool for docs/PERFORMANCE.md.
 *
 *   node --import tsx bench/cpuprofile-summary.ts <file.cpuprofile> [top functions, default 25]
 */
import { readFileSync } from 'node:fs';

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
}
interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

const file = process.argv[2];
if (!file) throw new Error('usage: cpuprofile-summary.ts <file.cpuprofile> [top]');
const top = Number(process.argv[3] ?? 25);
const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
const byId = new Map(profile.nodes.map((n) => [n.id, n]));

function bucket(frame: CallFrame): string {
  const { url, functionName } = frame;
  if (!url) {
    if (functionName === '(idle)') return '(idle)';
    if (functionName === '(garbage collector)') return '(garbage collector)';
    if (functionName === '(program)') return '(program: native, not attributed)';
    return `(native) ${functionName}`;
  }
  const nm = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (nm) return `npm ${nm[1]}`;
  if (url.startsWith('node:')) return `node ${url.slice(5).split('/')[0]}`;
  const project = /\/work\/[^/]+\/((?:shared|services|bench)\/[^/]+)/.exec(url);
  if (project) return `project ${project[1]}`;
  return url;
}

const selfBucket = new Map<string, number>();
const selfFunction = new Map<string, number>();
let total = 0;
for (let i = 0; i < profile.samples.length; i++) {
  const node = byId.get(profile.samples[i]!)!;
  const dt = profile.timeDeltas[i] ?? 0;
  total += dt;
  const b = bucket(node.callFrame);
  selfBucket.set(b, (selfBucket.get(b) ?? 0) + dt);
  const fn = `${node.callFrame.functionName || '(anonymous)'} ${node.callFrame.url.replace(/^.*node_modules\//, '').replace(/^file:\/\/\/work\/[^/]+\//, '')}:${node.callFrame.lineNumber + 1}`;
  selfFunction.set(fn, (selfFunction.get(fn) ?? 0) + dt);
}

// Socket writes (writev, writeBuffer, writeUtf8String) by the package that asked for them: walk up the stack.
const parent = new Map<number, number>();
for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
const WRITES = new Set(['writev', 'writeBuffer', 'writeUtf8String', 'writeLatin1String', 'writeAsciiString']);
const writesBy = new Map<string, number>();
let writes = 0;
for (let i = 0; i < profile.samples.length; i++) {
  const node = byId.get(profile.samples[i]!)!;
  if (node.callFrame.url || !WRITES.has(node.callFrame.functionName)) continue;
  const dt = profile.timeDeltas[i] ?? 0;
  writes += dt;
  let id: number | undefined = node.id;
  let owner = '(unknown)';
  while (id !== undefined) {
    const b = bucket(byId.get(id)!.callFrame);
    if (b.startsWith('npm ') || b.startsWith('project ')) {
      owner = b;
      break;
    }
    id = parent.get(id);
  }
  writesBy.set(owner, (writesBy.get(owner) ?? 0) + dt);
}

const idle = selfBucket.get('(idle)') ?? 0;
const busy = total - idle;
console.log(`profile ${(total / 1e6).toFixed(1)} s, busy ${(busy / 1e6).toFixed(1)} s (${((100 * busy) / total).toFixed(0)} %)\n`);
console.log('self time by where it ran (% of busy time):');
for (const [b, t] of [...selfBucket]
  .filter(([b]) => b !== '(idle)')
  .sort((a, b) => b[1] - a[1])
  .slice(0, 30)) {
  console.log(`  ${((100 * t) / busy).toFixed(1).padStart(5)} %  ${b}`);
}
console.log(`\nsocket writes (${((100 * writes) / busy).toFixed(1)} % of busy time), by the code that wrote (% of busy time):`);
for (const [b, t] of [...writesBy].sort((a, b) => b[1] - a[1]).slice(0, 10)) console.log(`  ${((100 * t) / busy).toFixed(1).padStart(5)} %  ${b}`);
console.log(`\ntop ${top} functions by self time (% of busy time):`);
for (const [f, t] of [...selfFunction]
  .filter(([f]) => !f.startsWith('(idle)'))
  .sort((a, b) => b[1] - a[1])
  .slice(0, top)) {
  console.log(`  ${((100 * t) / busy).toFixed(1).padStart(5)} %  ${f}`);
}
