/**
 * The runnable form of a statement, dialect by dialect: each placeholder of the dialect replaced
 * by its value as that dialect reads a literal, secret values masked; and which statements are
 * plain reads that EXPLAIN may be asked of.
 */
import t from 'tap'
import { analyzeSql, isPlainRead } from '../../../src/profiler/panels/db/sql.js'
import { runnableSql, sqlLiteral } from '../../../src/profiler/panels/db/sql-runnable.js'

const runnable = (sql: string, system: string, values: unknown, secret: (name: string | number | undefined) => boolean = () => false): string | undefined =>
  runnableSql(sql, analyzeSql(sql, system), system, values, (slot) => secret(slot.name ?? slot.index))

t.test('literals of each dialect', async (t) => {
  t.equal(sqlLiteral('O\'Brien \\ "x"', 'postgresql'), '\'O\'\'Brien \\ "x"\'', 'pg: the quote doubled, a backslash as is (standard_conforming_strings)')
  t.equal(sqlLiteral('O\'Brien \\ "x"\n', 'mysql'), '\'O\\\'Brien \\\\ \\"x\\"\\n\'', 'MySQL: backslash escapes')
  t.equal(sqlLiteral('O\'Brien', 'sqlite'), '\'O\'\'Brien\'')
  t.same([true, false].map((b) => [sqlLiteral(b, 'postgresql'), sqlLiteral(b, 'mysql'), sqlLiteral(b, 'sqlite')]), [['TRUE', 'true', '1'], ['FALSE', 'false', '0']])
  t.equal(sqlLiteral(null, 'postgresql'), 'NULL')
  t.equal(sqlLiteral(undefined, 'mysql'), 'NULL')
  t.equal(sqlLiteral(12n, 'sqlite'), '12')
  t.equal(sqlLiteral(Number.NaN, 'postgresql'), '\'NaN\'')
  t.equal(sqlLiteral(new Date('2026-01-02T03:04:05.678Z'), 'postgresql'), '\'2026-01-02T03:04:05.678Z\'')
  t.match(sqlLiteral(new Date('2026-01-02T03:04:05.678Z'), 'mysql'), /^'2026-01-0[12] \d\d:\d\d:05\.678'$/, 'MySQL: DATETIME in local time, as mysql2 sends it')
  t.equal(sqlLiteral(Buffer.from([1, 255]), 'postgresql'), '\'\\x01ff\'::bytea')
  t.equal(sqlLiteral(Buffer.from([1, 255]), 'mysql'), 'X\'01ff\'')
  t.equal(sqlLiteral([1, 'a'], 'postgresql'), 'ARRAY[1, \'a\']')
  t.equal(sqlLiteral([], 'postgresql'), '\'{}\'')
  t.equal(sqlLiteral([1, 2], 'mysql'), '1, 2', 'mysql2 expands a list')
  t.equal(sqlLiteral({ a: 'b' }, 'postgresql'), '\'{"a":"b"}\'', 'an object as JSON')
})

t.test('placeholders of each dialect', async (t) => {
  t.equal(runnable('SELECT * FROM t WHERE a = $2 AND b = $1 AND c ? \'k\'', 'postgresql', ['x', 2]), 'SELECT * FROM t WHERE a = 2 AND b = \'x\' AND c ? \'k\'', 'pg: $n by number; a jsonb ? is no placeholder')
  t.equal(runnable('SELECT * FROM t WHERE a = ? AND b = \'?\' AND c = ?', 'mysql', [1, 'z']), 'SELECT * FROM t WHERE a = 1 AND b = \'?\' AND c = \'z\'', 'MySQL: ? in order, not inside a string')
  t.equal(runnable('SELECT * FROM t WHERE a = :id', 'mysql', { id: 5 }), 'SELECT * FROM t WHERE a = 5', 'MySQL named')
  t.equal(runnable('SELECT * FROM t WHERE a = ? AND b = @b AND c = :c AND d = $d AND e = ?2', 'sqlite', { 1: 1, 2: 2, b: 'B', c: 'C', d: 'D' }), 'SELECT * FROM t WHERE a = 1 AND b = \'B\' AND c = \'C\' AND d = \'D\' AND e = 2', 'SQLite: ?, @, :, $ and ?NNN')
  t.equal(runnable('UPDATE users SET password = $1 WHERE id = $2', 'postgresql', ['hunter2', 3], (slot) => slot === 0), 'UPDATE users SET password = \'******\' WHERE id = 3', 'a secret value stays masked')
  t.equal(runnable('SELECT 1', 'postgresql', []), undefined, 'no placeholder: no runnable form')
  t.equal(runnable('SELECT $3', 'postgresql', [1]), undefined, 'a value missing: left as is, nothing replaced')
})

t.test('plain reads', async (t) => {
  for (const sql of ['SELECT * FROM t WHERE id = $1', '  /* hint */ select 1;', 'WITH a AS (SELECT 1) SELECT * FROM a', 'SELECT updated_at, start FROM "update"']) t.ok(isPlainRead(sql, 'postgresql'), sql)
  for (const sql of ['UPDATE t SET a = 1', 'WITH gone AS (DELETE FROM t RETURNING id) SELECT * FROM gone', 'SELECT * INTO backup FROM t', 'SELECT * FROM t FOR UPDATE', 'SELECT 1; DROP TABLE t', 'EXPLAIN SELECT 1', 'INSERT INTO t SELECT * FROM u']) t.notOk(isPlainRead(sql, 'postgresql'), sql)
})
