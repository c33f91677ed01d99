import { originalPositionFor, TraceMap } from '@jridgewell/trace-mapping';
import { WRAPPER_LINES, type FunctionBuild } from './build';

/** The file name a function's bundle is compiled under: every position in it is mapped back. */
export const BUNDLE_FILENAME = 'islet:bundle';

const POSITION = /islet:bundle:(\d+):(\d+)/g;
const FRAME_LINE = /^\s+at .*islet:bundle:\d+:\d+\)?$/;

/**
 * Turns positions in a function's bundle back into the user's own files, lines and columns
 * (TypeScript included), with esbuild's source map. The map is parsed on first use: only errors
 * pay for it.
 */
export class StackMapper {
  private trace: TraceMap | undefined;

  constructor(private readonly build: Pick<FunctionBuild, 'map' | 'shifts'>) {}

  /** Whether `text` holds positions to map. */
  static mentions(text: string): boolean {
    return text.includes(BUNDLE_FILENAME);
  }

  /** `text` with every bundle position replaced by `/<file>:<line>:<column>`; frames of islet's own glue are dropped. */
  map(text: string): string {
    if (!StackMapper.mentions(text)) return text;
    const lines = text.split('\n').filter((line) => !FRAME_LINE.test(line) || this.position(line) !== undefined);
    return lines.join('\n').replace(POSITION, (whole) => this.position(whole) ?? whole);
  }

  /** The first frame of `stack` in the user's files, with node_modules frames passed over when there is one of the user's own. */
  private position(text: string): string | undefined {
    const m = /islet:bundle:(\d+):(\d+)/.exec(text);
    if (!m) return undefined;
    this.trace ??= new TraceMap(this.build.map);
    const original = originalPositionFor(this.trace, { line: Number(m[1]) - WRAPPER_LINES, column: Number(m[2]) - 1 });
    if (original.source === null || original.line === null || original.column === null || original.source.startsWith('islet-')) return undefined;
    const shift = this.build.shifts[original.source];
    const column = original.column + 1 - (shift && shift.line === original.line && original.column >= shift.column + shift.length ? shift.length : 0);
    return `/${original.source}:${original.line}:${column}`;
  }
}
