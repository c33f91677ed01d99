import * as tar from 'tar';

/**
 * Packs a function folder as tar.gz: every file, node_modules and pip-installed packages
 * included; `.git` and the symlinks npm puts in node_modules/.bin left out.
 */
export async function packFolder(dir: string): Promise<Buffer> {
  const stream = tar.c(
    {
      gzip: true,
      cwd: dir,
      portable: true,
      follow: false,
      filter: (entryPath, stat) => {
        const p = entryPath.replace(/^\.\//, '');
        if (p === '.git' || p.startsWith('.git/')) return false;
        if ('isSymbolicLink' in stat && stat.isSymbolicLink() && /(^|\/)node_modules\/\.bin\//.test(p)) return false;
        return true;
      },
    },
    ['.'],
  );
  const chunks: Buffer[] = [];
  for await (const chunk of stream as AsyncIterable<Buffer>) chunks.push(chunk);
  return Buffer.concat(chunks);
}
