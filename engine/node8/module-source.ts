import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import * as esbuild from 'esbuild';

/**
 * The source of one of a function's files as the sandbox's run-time `require` loads it (a computed
 * name the deploy could not bundle): JSON and CommonJS as they are; ES modules (`.mjs`, or `.js`
 * in a `"type": "module"` package) and TypeScript turned into CommonJS, as the bundle would have
 * them. Undefined for a file that is not the function's.
 */
export function moduleSource(codeDir: string, files: ReadonlySet<string>, rel: string): string | undefined {
  if (!files.has(rel)) return undefined;
  const text = readFileSync(path.join(codeDir, rel), 'utf8');
  const loader = /\.[cm]?ts$/.test(rel)
    ? 'ts'
    : rel.endsWith('.tsx')
      ? 'tsx'
      : rel.endsWith('.jsx')
        ? 'jsx'
        : rel.endsWith('.mjs') || (rel.endsWith('.js') && isModulePackage(codeDir, files, rel))
          ? 'js'
          : undefined;
  if (!loader) return text;
  try {
    return esbuild.transformSync(text, {
      loader,
      format: 'cjs',
      target: 'node20',
      sourcefile: `/${rel}`,
      define: { 'import.meta.url': JSON.stringify(`file:///${rel}`) },
      supported: { 'dynamic-import': false },
    }).code;
  } catch (err) {
    // The sandbox's require reports it as the module's own error.
    const first = (err as esbuild.TransformFailure).errors?.[0];
    const where = first?.location ? ` (${rel}:${first.location.line}:${first.location.column + 1})` : '';
    return `throw new SyntaxError(${JSON.stringify(`${first?.text ?? String(err)}${where}`)});`;
  }
}

/** Whether the nearest package.json above `rel` says `"type": "module"`. */
function isModulePackage(codeDir: string, files: ReadonlySet<string>, rel: string): boolean {
  for (let dir = path.posix.dirname(rel); ; dir = path.posix.dirname(dir)) {
    const pkg = dir === '.' ? 'package.json' : `${dir}/package.json`;
    if (files.has(pkg)) {
      try {
        return (JSON.parse(readFileSync(path.join(codeDir, pkg), 'utf8')) as { type?: unknown }).type === 'module';
      } catch {
        return false;
      }
    }
    if (dir === '.' || dir === '/') return false;
  }
}
