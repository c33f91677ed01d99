const { DateTime, Duration } = require('luxon');

exports.handler = () => {
  const d = DateTime.fromISO('2024-03-10T15:30:00Z', { zone: 'utc' });
  return { iso: d.plus({ days: 3 }).toISO(), weekday: d.weekdayLong, duration: Duration.fromObject({ minutes: 135 }).shiftTo('hours', 'minutes').toObject() };
};
