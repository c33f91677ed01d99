import { addDays, differenceInCalendarDays, formatISO, parseISO, isLeapYear } from 'date-fns';

export function handler() {
  const d = parseISO('2024-02-28T00:00:00Z');
  return { plusTwo: formatISO(addDays(d, 2), { representation: 'date' }).length, days: differenceInCalendarDays(parseISO('2024-12-25'), parseISO('2024-01-01')), leap: isLeapYear(d) };
}
