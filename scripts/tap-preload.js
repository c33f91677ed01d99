// Loaded first in every test process (package.json: tap's node-arg). The tests run compiled to
// dist/test, so they need no TypeScript loader, yet tap's default typescript plugin imports ts-node
// (and TypeScript with it) into each test process unless TAP_TYPE_STRIP_ONLY is 1, which the plugin
// sets back to 0 on Node 20 in tap's own process: measured on 2 cores, 1.9 s of CPU per process
// (node -e 0 with that import: 1.3 s user + 0.6 s system, 0.3 s without), for each of 89 files.
'use strict';
process.env.TAP_TYPE_STRIP_ONLY = '1';
// A temporary folder of this test process's own, removed when it exits (test/helpers/scratch.ts).
require('../dist/test/helpers/scratch.js');
// A last full collection while isolated-vm is still up: handles of disposed isolates left for a
// collection during the process's teardown abort it there (SIGABRT after every test passed: see
// collectIsolateHandles in test/helpers/isolates.ts).
process.on('exit', () => globalThis.gc?.());
