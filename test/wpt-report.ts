import { startTestServer } from './helpers/server';
import { runWpt, wptManifest, wptTable } from './helpers/wpt';

// `npm run wpt [pattern] [--failures]`: the vendored web-platform-tests on node8, passed/total
// subtests per directory; a pattern keeps the files whose path matches it, --failures lists what failed.
async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const pattern = args.find((a) => !a.startsWith('--'));
  const s = await startTestServer();
  try {
    const started = performance.now();
    const results = await runWpt(s, pattern ? { only: new RegExp(pattern) } : {});
    const manifest = wptManifest();
    console.log(`web-platform-tests ${manifest.commit.slice(0, 12)} on node8, ${results.length} files in ${((performance.now() - started) / 1000).toFixed(1)} s\n`);
    console.log(wptTable(results));
    if (args.includes('--failures')) {
      for (const r of results) {
        if (r.passed === r.total && !r.harness) continue;
        console.log(`\n${r.file}: ${r.passed}/${r.total}${r.harness ? ` [${r.harness}]` : ''}`);
        for (const f of r.failed) console.log(`  ${f}`);
      }
    }
  } finally {
    await s.stop();
  }
}

void main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
