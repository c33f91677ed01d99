const moment = require('moment');

exports.handler = () => {
  const d = moment.utc('2024-03-10T15:30:00Z');
  return { formatted: d.format('dddd, MMMM Do YYYY, h:mm a'), plus: d.clone().add(1, 'month').format('YYYY-MM-DD'), diff: moment.utc('2024-12-25').diff(d, 'days') };
};
