import busboy from 'busboy';

// A multipart/form-data body as a browser sends it: a field and a file, parsed by busboy from the
// request's own body (busboy reads headers with Buffer's latin1Slice).
export default {
  async fetch(request) {
    const parser = busboy({ headers: Object.fromEntries(request.headers) });
    const parts = [];
    const done = new Promise((resolve, reject) => {
      parser.on('field', (name, value, info) => parts.push({ kind: 'field', name, value, mimeType: info.mimeType }));
      parser.on('file', (name, stream, info) => {
        const chunks = [];
        stream.on('data', (chunk) => chunks.push(chunk));
        stream.on('end', () => parts.push({ kind: 'file', name, filename: info.filename, mimeType: info.mimeType, text: Buffer.concat(chunks).toString('utf8') }));
      });
      parser.on('close', resolve);
      parser.on('error', reject);
    });
    for await (const chunk of request.body) parser.write(chunk);
    parser.end();
    await done;
    return Response.json(parts);
  },
};
