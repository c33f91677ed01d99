// First: it chooses where everything below writes its temporary files.
import './scratch';
import { mkdtempSync, mkdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';

/** Writes a one-file function folder (function.js with `source`) and returns its path. */
export function functionFolder(source: string, files: Record<string, string> = {}): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'islet-fn-'));
  writeFileSync(path.join(dir, 'function.js'), source);
  for (const [name, content] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
    writeFileSync(path.join(dir, name), content);
  }
  return dir;
}
