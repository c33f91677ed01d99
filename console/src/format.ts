/** How figures and bodies are shown. Everything here returns text: nothing is ever parsed as HTML. */

export function formatTime(ms: number): string {
  const d = new Date(ms);
  const pad = (n: number, w = 2) => String(n).padStart(w, '0');
  return `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}.${pad(d.getMilliseconds(), 3)}`;
}

export function formatDate(iso: string): string {
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso : d.toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' });
}

/** As formatDate, to the second (a schedule may tick every second). */
export function formatDateSeconds(iso: string): string {
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso : d.toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'medium' });
}

export function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KB`;
  return `${(n / 1024 / 1024).toFixed(1)} MB`;
}

/** A duration in ms, with the precision that reads well at its size. */
export function formatMs(ms: number | null | undefined): string {
  if (ms === null || ms === undefined || !Number.isFinite(ms)) return '–';
  if (ms < 1) return `${(ms * 1000).toFixed(0)} µs`;
  if (ms < 100) return `${ms.toFixed(1)} ms`;
  if (ms < 10_000) return `${ms.toFixed(0)} ms`;
  return `${(ms / 1000).toFixed(1)} s`;
}

export function formatCount(n: number): string {
  return n.toLocaleString('en-US');
}

/** A response body for display: pretty-printed when it is JSON, else the text as it came. */
export function showBody(text: string, contentType: string | null): { text: string; json: boolean } {
  const looksJson = /\bjson\b/i.test(contentType ?? '') || /^\s*[[{"]/.test(text);
  if (looksJson && text.trim() !== '') {
    try {
      return { text: JSON.stringify(JSON.parse(text), null, 2), json: true };
    } catch {
      // not JSON after all
    }
  }
  return { text, json: false };
}

/** Bodies over this are shown cut (the page stays responsive); the size shown is the whole body's. */
const SHOW_BYTES = 256 * 1024;

/**
 * A response body for display: text (pretty-printed JSON) when it decodes as UTF-8, otherwise a hex
 * dump of its first bytes.
 */
export function showBytes(bytes: Uint8Array, contentType: string | null): { text: string; json: boolean } {
  const shown = bytes.subarray(0, SHOW_BYTES);
  const cut = bytes.byteLength > SHOW_BYTES ? `\n… (the first ${formatBytes(SHOW_BYTES)} of ${formatBytes(bytes.byteLength)})` : '';
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(shown, { stream: cut !== '' });
  } catch {
    return { text: `${hexDump(shown.subarray(0, 512))}${bytes.byteLength > 512 ? `\n… (${formatBytes(bytes.byteLength)} of binary data)` : ''}`, json: false };
  }
  if (cut) return { text: text + cut, json: false };
  return showBody(text, contentType);
}

function hexDump(bytes: Uint8Array): string {
  const lines: string[] = [];
  for (let at = 0; at < bytes.length; at += 16) {
    const row = bytes.subarray(at, at + 16);
    const hex = Array.from(row, (b) => b.toString(16).padStart(2, '0')).join(' ');
    const ascii = Array.from(row, (b) => (b >= 0x20 && b < 0x7f ? String.fromCharCode(b) : '.')).join('');
    lines.push(`${at.toString(16).padStart(6, '0')}  ${hex.padEnd(47)}  ${ascii}`);
  }
  return lines.join('\n');
}
