#!/usr/bin/env node
// Writes the README's table of `islet serve` settings again from supervisor/settings.ts (built into
// dist/ by `npm run build`), between its <!-- settings:start --> and <!-- settings:end --> markers.
'use strict';
const { readFileSync, writeFileSync } = require('node:fs');
const path = require('node:path');
const { settingsTable } = require('../dist/supervisor/settings.js');

const readme = path.join(__dirname, '..', 'README.md');
const text = readFileSync(readme, 'utf8');
const updated = text.replace(/(<!-- settings:start -->\n)[\s\S]*?(<!-- settings:end -->)/, `$1${settingsTable()}\n$2`);
if (updated === text) console.log('README.md: the settings table is up to date');
else {
  writeFileSync(readme, updated);
  console.log('README.md: the settings table is written again');
}
