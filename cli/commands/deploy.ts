import { existsSync } from 'node:fs';
import * as path from 'node:path';
import { isPublicName } from '../../engine/manifest';
import { ServerError, upload } from '../api';
import { requireAccount } from '../config';
import { CliError } from '../errors';
import { nodeModulesFilter } from '../needed-files';
import { packFolder } from '../pack';
import { readServiceFile } from '../service-yml';
import { servingText } from './versions';

/** Bundles at least this large show upload progress. */
const PROGRESS_FROM_BYTES = 1024 * 1024;

export interface DeployOptions {
  dir?: string;
  /** A note kept with the version. */
  message?: string;
  /** Serve the new version to this share of calls (0–100); the previous one keeps the rest. */
  percent?: string;
  /** `NAME=VALUE` env values for the function, over service.yml's and the shell's (not the CLI's own credentials). */
  envValues?: string[];
  /** Uploads node_modules whole instead of building here to find what the code uses. */
  wholeNodeModules?: boolean;
  cwd?: string;
  env?: NodeJS.ProcessEnv;
  /** Draws upload progress; by default on stderr when it is a terminal, else not at all. */
  progress?: ((line: string) => void) | null;
}

/** Finds the function folder: --dir, else ./<name> when it has a service.yml, else the current folder. */
function functionDir(name: string, options: DeployOptions): { dir: string; shown: string } {
  const cwd = options.cwd ?? process.cwd();
  if (options.dir) return { dir: path.resolve(cwd, options.dir), shown: options.dir };
  if (existsSync(path.join(cwd, name, 'service.yml'))) return { dir: path.join(cwd, name), shown: name };
  return { dir: cwd, shown: '.' };
}

/** `--env NAME=VALUE` flags as a map; a name must be a valid variable name. */
function parseEnvValues(pairs: string[]): Record<string, string> {
  const values: Record<string, string> = {};
  for (const pair of pairs) {
    const eq = pair.indexOf('=');
    const name = eq > 0 ? pair.slice(0, eq) : '';
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) throw new CliError(`--env ${pair}: expected NAME=VALUE`);
    values[name] = pair.slice(eq + 1);
  }
  return values;
}

/** `islet deploy <name>`: validates service.yml, packs the folder, uploads it, prints how to invoke. */
export async function deploy(name: string, options: DeployOptions = {}): Promise<string> {
  const env = options.env ?? process.env;
  const { dir, shown } = functionDir(name, options);
  const service = readServiceFile(dir, shown);
  const given = parseEnvValues(options.envValues ?? []);
  const spec = service.spec(name, { ...env, ...given });
  Object.assign(spec.env, given);
  const credentials = requireAccount(env);
  const python = spec.runtime.startsWith('python');
  const leftOut = { files: 0, bytes: 0 };
  // Without node_modules there is nothing to leave out, and no build to make here (0.5 s at a load of 12).
  const filter = python || options.wholeNodeModules || !existsSync(path.join(dir, 'node_modules')) ? undefined : await nodeModulesFilter(dir, spec.file);
  const bundle = await packFolder(dir, { python, ...(filter ? { keep: filter.keep, leftOut } : {}) });
  const form = new FormData();
  form.set('spec', JSON.stringify(spec));
  if (options.message !== undefined) form.set('message', options.message);
  if (options.percent !== undefined) form.set('percent', options.percent);
  form.set('bundle', new Blob([bundle], { type: 'application/gzip' }), 'bundle.tar.gz');
  const encoded = new Response(form);
  const contentType = encoded.headers.get('content-type')!;
  const body = Buffer.from(await encoded.arrayBuffer());
  // A redrawn line means something only on a terminal: in a log or a pipe it is 100 lines of noise.
  const progress = options.progress === undefined ? (process.stderr.isTTY ? (line: string) => process.stderr.write(line) : null) : options.progress;
  let lastShown = -1;
  let deployed: { function: { version: number; traffic?: { version: number; percent: number }[] } };
  try {
    deployed = await upload(credentials.url, `/v2/accounts/${credentials.accountId}/functions/${encodeURIComponent(name)}`, credentials.apiKey, contentType, body, (sent, total) => {
      if (!progress || total < PROGRESS_FROM_BYTES) return;
      const percent = Math.floor((sent / total) * 100);
      if (percent === lastShown) return;
      lastShown = percent;
      progress(`\rUploading ${(total / 1048576).toFixed(1)} MB: ${percent}%${sent === total ? '\n' : ''}`);
    });
  } catch (err) {
    if (err instanceof ServerError && typeof err.body.file === 'string' && typeof err.body.line === 'number') {
      // The function's own code failed to load: name its file and line, and show its traceback.
      const stack = typeof err.body.stack === 'string' && err.body.stack ? err.body.stack : undefined;
      throw new CliError(`${path.join(shown, err.body.file)}:${err.body.line}: ${err.body.message}`, 1, stack);
    }
    if (err instanceof ServerError && typeof err.body.key === 'string') {
      const line = service.lineOf(`functions.${name}.${err.body.key}`);
      throw new CliError(`${service.file}${line ? `:${line}` : ''}: ${err.body.message}`);
    }
    throw err;
  }
  const url = `${credentials.url}/v2/run/${credentials.accountId}/${name}`;
  // Lines to paste as they are: no quotes around them, the header's own in the quotes a shell needs.
  const curl = isPublicName(name) ? `curl ${url}` : `curl -H "X-Service-Api-Key: $(islet show apiKey)" ${url}`;
  const traffic = deployed.function.traffic ?? [];
  // A split is said (the plain deploy's output is the one SPEC §4 shows).
  const split =
    options.percent === undefined || (traffic.length === 1 && traffic[0]!.version === deployed.function.version)
      ? ''
      : servingText(name, traffic) + `  ("islet promote ${name}" sends every call to version ${deployed.function.version}, "islet rollback ${name}" none)\n`;
  const left = leftOut.files > 0 ? `Left out ${leftOut.files} file${leftOut.files === 1 ? '' : 's'} (${megabytes(leftOut.bytes)}) of node_modules: packages the code never imports\n` : '';
  return `Deployed function ${name} (version ${deployed.function.version})\n${left}Invoke with one of:\n  islet invoke ${name}\n  ${curl}\n${split}`;
}

function megabytes(bytes: number): string {
  return bytes < 1024 * 1024 ? `${Math.ceil(bytes / 1024)} KB` : `${(bytes / (1024 * 1024)).toFixed(1)} MB`;
}
