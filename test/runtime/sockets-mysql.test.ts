import t from 'tap';
import { functionFolder } from '../helpers/functions';
import { mariadbMissing, startMariaDb, type PrivateMariaDb } from '../helpers/mariadb';
import { copyPackage } from '../helpers/package-closure';
import { ROOT, startTestServer, type TestServer } from '../helpers/server';

// Outbound TCP (issue 25, item 5): mysql2, deployed in a function as users bundle it, against a
// private MariaDB (one server for this file): queries, prepared statements, the server's errors, a
// pool kept between calls, and the egress rule that refuses a private address unless the operator
// allows it. `s` allows private egress (the server is on loopback); `strict` keeps the default.
let s: TestServer;
let strict: TestServer;
let db: PrivateMariaDb;

const MYSQL = `
const mysql = require('mysql2/promise');
const options = ({ port, user, password, database }) => ({ host: '127.0.0.1', port, user, password, database });

exports.queries = async (config) => {
  const conn = await mysql.createConnection(options(config));
  try {
    await conn.query('CREATE TABLE IF NOT EXISTS fruit (id INT AUTO_INCREMENT PRIMARY KEY, name VARCHAR(40) NOT NULL, price DECIMAL(6,2), picked DATE)');
    await conn.query('DELETE FROM fruit');
    const [inserted] = await conn.query('INSERT INTO fruit (name, price, picked) VALUES ?', [[['apple', 1.5, '2026-09-01'], ['pear', 2.25, null], ['plum', 0.75, '2026-08-15']]]);
    const [rows] = await conn.query('SELECT name, price, picked FROM fruit ORDER BY id');
    // Prepared statements (COM_STMT_PREPARE/EXECUTE, the binary protocol), the second time from mysql2's cache.
    const [dear] = await conn.execute('SELECT name FROM fruit WHERE price > ? ORDER BY name', [1]);
    const [again] = await conn.execute('SELECT name FROM fruit WHERE price > ? ORDER BY name', [2]);
    const [[typed]] = await conn.execute('SELECT ? AS text, ? AS number, CAST(? AS SIGNED) + 1 AS sum', ['héllo', 42, 41]);
    let error;
    try {
      await conn.query('SELEKT 1');
    } catch (err) {
      error = { code: err.code, errno: err.errno, sqlState: err.sqlState, message: err.message };
    }
    let missing;
    try {
      await conn.execute('SELECT * FROM no_such_table WHERE id = ?', [1]);
    } catch (err) {
      missing = { code: err.code, message: err.message };
    }
    const [[after]] = await conn.query('SELECT 1 + 1 AS two');
    return {
      affected: inserted.affectedRows,
      rows: rows.map((r) => ({ name: r.name, price: r.price, picked: r.picked === null ? null : r.picked.toISOString().slice(0, 10) })),
      dear: dear.map((r) => r.name),
      again: again.map((r) => r.name),
      typed,
      error,
      missing,
      two: after.two,
    };
  } finally {
    await conn.end();
  }
};

// A pool kept between calls, as apps keep one: its idle connection closes with the call that opened
// it (a socket belongs to its call), and the next call's query takes a new one.
let pool;
exports.pool = async (config) => {
  pool ??= mysql.createPool({ ...options(config), connectionLimit: 2 });
  const [[row]] = await pool.query('SELECT CONNECTION_ID() AS id, ? AS hello', ['pool']);
  const [[prepared]] = await pool.execute('SELECT ? * 2 AS doubled', [21]);
  return { hello: row.hello, id: row.id, doubled: prepared.doubled };
};

exports.refused = async (config) => {
  try {
    await mysql.createConnection({ ...options(config), connectTimeout: 10000 });
    return { connected: true };
  } catch (err) {
    return { code: err.code, message: err.message, fatal: err.fatal };
  }
};
`;

const missing = mariadbMissing();
if (missing) {
  if (process.env.CI) t.fail(`${missing} (CI must run this test: .ci/run installs it)`);
  else t.plan(0, `skip: ${missing} (.ci/run installs it)`);
} else {
  t.before(async () => {
    [db, s, strict] = await Promise.all([startMariaDb(), startTestServer({ engine: { allowPrivateEgress: true }, limits: { maxInstancesPerVersion: 1 } }), startTestServer()]);
    const dir = functionFolder(MYSQL);
    copyPackage(ROOT, 'mysql2', dir);
    await s.deploy('queries', dir, 'queries', { timeoutMs: 30_000 });
    await s.deploy('pool', dir, 'pool', { timeoutMs: 30_000 });
    await strict.deploy('refused', dir, 'refused', { timeoutMs: 30_000 });
  });
  t.teardown(async () => {
    db?.stop();
    await s?.stop();
    await strict?.stop();
  });

  const config = () => ({ port: db.port, user: db.user, password: db.password, database: db.database });

  t.test('mysql2: queries, prepared statements and the server errors, on one connection', async (t) => {
    for (const round of [1, 2]) {
      const out = await s.invokeJson('queries', config());
      t.equal(out.affected, 3, `round ${round}: a multi-row insert`);
      t.same(
        out.rows,
        [
          { name: 'apple', price: '1.50', picked: '2026-09-01' },
          { name: 'pear', price: '2.25', picked: null },
          { name: 'plum', price: '0.75', picked: '2026-08-15' },
        ],
        'rows with DECIMAL (a string, as mysql2 gives it), DATE and NULL',
      );
      t.same(out.dear, ['apple', 'pear'], 'a prepared statement');
      t.same(out.again, ['pear'], 'the same statement again, with another parameter');
      t.same(out.typed, { text: 'héllo', number: 42, sum: 42 }, 'parameters and results of the binary protocol, UTF-8 included');
      t.match(out.error, { code: 'ER_PARSE_ERROR', errno: 1064, sqlState: '42000', message: /You have an error in your SQL syntax/ }, "bad SQL: the server's error, with its code");
      t.match(out.missing, { code: 'ER_NO_SUCH_TABLE', message: "Table 'islet.no_such_table' doesn't exist" }, 'a prepared statement on a missing table');
      t.equal(out.two, 2, 'the connection goes on after the errors');
    }
  });

  t.test('mysql2: a pool kept between calls works on each call', async (t) => {
    const first = await s.invokeJson('pool', config());
    t.same({ hello: first.hello, doubled: first.doubled }, { hello: 'pool', doubled: 42 });
    const second = await s.invokeJson('pool', config());
    t.same({ hello: second.hello, doubled: second.doubled }, { hello: 'pool', doubled: 42 }, "the pool's next call works: its idle connection was closed with the first call");
    t.not(second.id, first.id, 'on a new connection');
  });

  t.test('mysql2: a private address is refused without the operator setting', async (t) => {
    const out = await strict.invokeJson('refused', config());
    t.equal(out.code, 'ERR_EGRESS_BLOCKED');
    t.match(out.message, `127.0.0.1:${db.port}`);
    t.match(out.message, /--allow-private-egress/);
    t.equal(out.fatal, true, 'a fatal connection error, as mysql2 reports a refused connect');
  });
}
