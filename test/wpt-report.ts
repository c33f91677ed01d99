import { startTestServer } from './helpers/server';
import { runWpt, wptComparison, wptManifest, wptTable, type WptFileResult } from './helpers/wpt';
import { runWptInNode } from './helpers/wpt-node';

// `npm run wpt [pattern] [--failures] [--node]`: the vendored web-platform-tests on node8,
// passed/total subtests per directory; a pattern keeps the files whose path matches it, --failures
// lists what failed, --node runs the same files in plain Node as the control and prints islet's
// share of the subtests Node passes (the failures Node passes are marked).
async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const pattern = args.find((a) => !a.startsWith('--'));
  const only = pattern ? { only: new RegExp(pattern) } : {};
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
  let control: Map<string, WptFileResult> | undefined;
  if (args.includes('--node')) {
    const started = performance.now();
    const node = await runWptInNode(only);
    control = new Map(node.map((r) => [r.file, r]));
    console.log(`\nthe control: the same files in Node ${process.versions.node} (a process each), ${((performance.now() - started) / 1000).toFixed(1)} s\n`);
    console.log(wptComparison(results, node));
  }
  if (args.includes('--failures')) {
    for (const r of results) {
      if (r.passed === r.total && !r.harness) continue;
      const nodePassed = new Set(control?.get(r.file)?.passedNames ?? []);
      const node = control?.get(r.file);
      console.log(`\n${r.file}: ${r.passed}/${r.total}${r.harness ? ` [${r.harness}]` : ''}${node ? ` (Node ${node.passed}/${node.total}${node.harness ? ` [${node.harness}]` : ''})` : ''}`);
      for (const f of r.failed) console.log(`  ${[...nodePassed].some((name) => f.startsWith(`${name}: `)) ? '[node passes] ' : ''}${f}`);
    }
  }
}

void main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
