const dayjs = require('dayjs');
const utc = require('dayjs/plugin/utc');
const relativeTime = require('dayjs/plugin/relativeTime');

dayjs.extend(utc);
dayjs.extend(relativeTime);

exports.handler = () => {
  const d = dayjs.utc('2024-02-28T10:00:00Z');
  return { plusTwo: d.add(2, 'day').format('YYYY-MM-DD'), weekday: d.format('dddd'), from: d.from(d.add(3, 'hour')), iso: d.toISOString() };
};
