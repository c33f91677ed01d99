/**
 * isolated-vm on Node 20 needs `--no-node-snapshot`; without it the process can crash. Every islet
 * entry point passes the flag; this check turns a forgotten flag into a clear error.
 */
export function checkNodeFlags(): void {
  const major = Number(process.versions.node.split('.')[0]);
  if (major >= 20 && !process.execArgv.includes('--no-node-snapshot') && !/--no-node-snapshot/.test(process.env.NODE_OPTIONS ?? '')) {
    throw new Error('islet must run with `node --no-node-snapshot` on Node.js 20+ (isolated-vm requires it); use `npm start` or the `islet` command');
  }
}
