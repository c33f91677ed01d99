import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';

export interface Column<T> {
  key: string;
  label: string;
  /** What the column sorts by (strings alphabetically, numbers by size; missing values last). */
  sortValue: (row: T) => string | number | undefined;
  render: (row: T) => ComponentChildren;
  numeric?: boolean;
}

/** A table whose column headers are buttons that sort it (announced through aria-sort). */
export function SortableTable<T>({ caption, columns, rows, rowKey, initialSort }: { caption: string; columns: Column<T>[]; rows: T[]; rowKey: (row: T) => string; initialSort: string }) {
  const [sort, setSort] = useState({ key: initialSort, ascending: true });
  const column = columns.find((c) => c.key === sort.key) ?? columns[0]!;
  const sorted = [...rows].sort((a, b) => compare(column.sortValue(a), column.sortValue(b)) * (sort.ascending ? 1 : -1));
  const toggle = (key: string) => setSort((s) => ({ key, ascending: s.key === key ? !s.ascending : true }));
  return (
    <table class="data">
      <caption class="visually-hidden">{caption}</caption>
      <thead>
        <tr>
          {columns.map((c) => (
            <th scope="col" class={c.numeric ? 'num' : undefined} aria-sort={c.key === sort.key ? (sort.ascending ? 'ascending' : 'descending') : undefined}>
              <button type="button" class="sort" onClick={() => toggle(c.key)}>
                {c.label}
                <span aria-hidden="true" class="arrow">
                  {c.key === sort.key ? (sort.ascending ? '▲' : '▼') : ''}
                </span>
              </button>
            </th>
          ))}
        </tr>
      </thead>
      <tbody>
        {sorted.map((row) => (
          <tr key={rowKey(row)}>
            {columns.map((c) => (
              <td class={c.numeric ? 'num' : undefined}>{c.render(row)}</td>
            ))}
          </tr>
        ))}
      </tbody>
    </table>
  );
}

function compare(a: string | number | undefined, b: string | number | undefined): number {
  if (a === b) return 0;
  if (a === undefined) return 1;
  if (b === undefined) return -1;
  if (typeof a === 'number' && typeof b === 'number') return a - b;
  return String(a).localeCompare(String(b), undefined, { numeric: true });
}
