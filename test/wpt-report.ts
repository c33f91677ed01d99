import { startTestServer } from './helpers/server';
import { runWpt, wptComparison, wptManifest, wptTable, type WptFileResult } from './helpers/wpt';
import { runWptInNode } from './helpers/wpt-node';
import { runWptInWorkerd, workerdVersion } from './helpers/wpt-workerd';

// `npm run wpt [pattern] [--failures] [--node] [--workerd <binary>]`: the vendored
// web-platform-tests on node8, passed/total subtests per directory; a pattern keeps the files whose
// path matches it, --failures lists what failed. --node runs the same files in plain Node as a
// control, --workerd in a workerd binary (npm's `workerd` package has one); each prints islet's
// share of the subtests the control passes, and marks the directories where islet passes fewer.
function parseArgs(args: string[]): { pattern?: string; failures: boolean; node: boolean; workerd?: string } {
  const out: { pattern?: string; failures: boolean; node: boolean; workerd?: string } = { failures: false, node: false };
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (a === '--failures') out.failures = true;
    else if (a === '--node') out.node = true;
    else if (a === '--workerd') {
      out.workerd = args[++i];
      if (!out.workerd) throw new Error('--workerd needs the path of a workerd binary, e.g. node_modules/.bin/workerd after `npm install workerd` in a folder of its own');
    } else if (a.startsWith('--')) throw new Error(`unknown option ${a}`);
    else out.pattern = a;
  }
  return out;
}

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  const only = args.pattern ? { only: new RegExp(args.pattern) } : {};
  const s = await startTestServer();
  let results: WptFileResult[];
  const manifest = wptManifest();
  try {
    const started = performance.now();
    results = await runWpt(s, only);
    console.log(`web-platform-tests ${manifest.commit.slice(0, 12)} on node8, ${results.length} files in ${((performance.now() - started) / 1000).toFixed(1)} s\n`);
    console.log(wptTable(results));
  } finally {
    await s.stop();
  }
  const controls: { name: string; byFile: Map<string, WptFileResult> }[] = [];
  if (args.node) {
    const started = performance.now();
    const node = await runWptInNode(only);
    controls.push({ name: 'node', byFile: new Map(node.map((r) => [r.file, r])) });
    console.log(`\nthe control: the same files in Node ${process.versions.node} (a process each), ${((performance.now() - started) / 1000).toFixed(1)} s\n`);
    console.log(wptComparison(results, node, 'node'));
  }
  if (args.workerd) {
    const started = performance.now();
    const workerd = await runWptInWorkerd(args.workerd, only);
    controls.push({ name: 'workerd', byFile: new Map(workerd.map((r) => [r.file, r])) });
    console.log(`\nthe control: the same files in workerd ${workerdVersion(args.workerd)} (a process each, nodejs_compat), ${((performance.now() - started) / 1000).toFixed(1)} s\n`);
    console.log(wptComparison(results, workerd, 'workerd'));
  }
  if (controls.length > 1) {
    // The yardstick of the issue: what any control passes, by file and subtest name.
    let either = 0;
    let both = 0;
    for (const r of results) {
      const passedByControl = new Set(controls.flatMap((c) => c.byFile.get(r.file)?.passedNames ?? []));
      either += passedByControl.size;
      both += r.passedNames.filter((n) => passedByControl.has(n)).length;
    }
    console.log(`\nislet passes ${both} of the ${either} subtests ${controls.map((c) => c.name).join(' or ')} pass (${((100 * both) / either).toFixed(1)}%)`);
  }
  if (args.failures) {
    for (const r of results) {
      if (r.passed === r.total && !r.harness) continue;
      const theirs = controls.map((c) => ({ name: c.name, result: c.byFile.get(r.file) }));
      const counts = theirs.map(({ name, result }) => (result ? ` (${name} ${result.passed}/${result.total}${result.harness ? ` [${result.harness}]` : ''})` : '')).join('');
      console.log(`\n${r.file}: ${r.passed}/${r.total}${r.harness ? ` [${r.harness}]` : ''}${counts}`);
      for (const f of r.failed) {
        const passers = theirs.filter(({ result }) => result?.passedNames.some((name) => f.startsWith(`${name}: `))).map(({ name }) => name);
        console.log(`  ${passers.length ? `[${passers.join(', ')} passes] ` : ''}${f}`);
      }
    }
  }
}

void main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
