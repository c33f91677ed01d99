import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { isFunctionName, RUNTIMES } from '../../engine/manifest';
import { CliError } from '../errors';

const NODE_STARTER = `// Called for every request: body is the parsed JSON body ({} when empty),
// context.request has method, path, query, headers, body (raw bytes), requestId and env.
exports.handler = async (body, context) => {
  const name = context.request.query.name || body.name || 'World';
  return \`Hello \${name}!\`;
};
`;

const PYTHON_STARTER = `# Called for every request: body is the parsed JSON body ({} when empty),
# req has method, path, query, headers, body (raw bytes), request_id and env.
def handler(body, req):
    name = req.query.get('name') or (body or {}).get('name') or 'World'
    return 'Hello %s!' % name
`;

function serviceYml(name: string, runtime: string, file: string): string {
  return `functions:
  ${name}:
    file: ${file}
    entrypoint: handler
    runtime: ${runtime}
    # timeout: 10000     # ms
    # memory: 128        # MB
    env:
      # GREETING: hello          # a value here is used as is
      # SERVICE_API_KEY:         # an empty value is read from your shell at deploy time
      #
      # To call other functions (sdk.invoke), give this one a key that can only call them, never
      # deploy or read logs (not your own key):
      #   islet deploy ${name} --env SERVICE_API_KEY=$(islet keys create --name ${name}-calls --scope invoke --quiet)
`;
}

/** `islet create <runtime> <name>`: a folder with a starter handler and service.yml. */
export function create(runtime: string, name: string, cwd = process.cwd()): string {
  if (!(RUNTIMES as readonly string[]).includes(runtime)) throw new CliError(`unknown runtime "${runtime}" (expected one of ${RUNTIMES.join(', ')})`);
  if (!isFunctionName(name)) throw new CliError(`invalid function name "${name}": use 1-128 characters of A-Z a-z 0-9 _ -, starting with a letter or digit`);
  const dir = path.join(cwd, name);
  if (existsSync(dir)) throw new CliError(`./${name} already exists: choose another name or remove it`);
  const python = runtime !== 'node8';
  const file = python ? 'function.py' : 'function.js';
  mkdirSync(dir);
  writeFileSync(path.join(dir, file), python ? PYTHON_STARTER : NODE_STARTER);
  writeFileSync(path.join(dir, 'service.yml'), serviceYml(name, runtime, file));
  return `Created function ${name} in ./${name}\n  (use "islet deploy ${name}" to deploy the function)\n`;
}
