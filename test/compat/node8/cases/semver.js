const semver = require('semver');

exports.handler = () => ({
  satisfies: semver.satisfies('1.2.3', '^1.0.0'),
  not: semver.satisfies('2.0.0', '~1.2.0'),
  inc: semver.inc('1.2.3', 'minor'),
  sorted: ['1.10.0', '1.2.0', '1.2.0-beta.1'].sort(semver.compare),
  coerced: semver.coerce('v3.4').version,
});
