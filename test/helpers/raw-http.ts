import { request } from 'node:http';
import { packFolder } from '../../cli/pack';
import { functionFolder } from './functions';

export interface RawAnswer {
  status: number;
  body: string;
  json: { errorCode?: string; message?: string } & Record<string, unknown>;
}

/**
 * One HTTP request with its path sent exactly as given: fetch would normalise `%2e%2e` segments
 * (the URL standard reads them as `..`) before the server could see them. A live-logs stream that
 * opens is closed at once (its status is what counts).
 */
export function rawRequest(url: string, method: string, path: string, headers: Record<string, string> = {}, body?: string | Buffer): Promise<RawAnswer> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const length = body === undefined ? {} : { 'content-length': String(Buffer.byteLength(body)) };
    const req = request({ host: hostname, port, method, path, agent: false, headers: { connection: 'close', ...length, ...headers } }, (res) => {
      const status = res.statusCode ?? 0;
      if (String(res.headers['content-type']).includes('event-stream')) {
        res.destroy();
        resolve({ status, body: '', json: {} });
        return;
      }
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => {
        let json = {};
        try {
          json = JSON.parse(text) as object;
        } catch {
          // not JSON
        }
        resolve({ status, body: text, json });
      });
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** A deploy upload (multipart/form-data) of a one-file node8 function, as `islet deploy` sends it. */
export async function deployUpload(source: string): Promise<{ body: Buffer; contentType: string }> {
  const form = new FormData();
  form.set('spec', JSON.stringify({ runtime: 'node8', file: 'function.js', entrypoint: 'handler', env: {} }));
  form.set('bundle', new Blob([await packFolder(functionFolder(source))]), 'bundle.tar.gz');
  const encoded = new Request('http://islet/', { method: 'PUT', body: form });
  return { body: Buffer.from(await encoded.arrayBuffer()), contentType: encoded.headers.get('content-type')! };
}
